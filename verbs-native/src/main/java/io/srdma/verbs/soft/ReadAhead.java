package io.srdma.verbs.soft;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.concurrent.TimeUnit;

/**
 * The read-ahead of one {@link Responder}'s connection: the bytes read from the socket and not yet
 * consumed (request headers, inline payloads). It is small ({@link #SMALL_SIZE}) on a connection
 * that carries few requests, grows to {@link #LARGE_SIZE} for a burst of small requests (fewer
 * reads), and goes back to small when the connection is quiet or idle again. After a large payload
 * it reads no more than a small one would, so the next large payload is not copied through it.
 * Growing and shrinking are rare by design (hysteresis), so a stable stream allocates nothing; no
 * frame field ever sizes it. A payload that does not fit is read straight into its region, so no
 * request needs more.
 *
 * <p>Confined to the responder's loop thread, except {@link #capacity} and {@link #peak}, which any
 * thread may read (tests).
 */
final class ReadAhead {
  /** The read-ahead of a connection that carries small requests: headers and inline payloads. */
  static final int SMALL_SIZE = 4 * 1024;

  /** The read-ahead during a burst of small requests, and the bound on it. */
  static final int LARGE_SIZE = 64 * 1024;

  /**
   * A payload above this is placed from the socket straight into its region: the next read after it
   * takes at most {@link #SMALL_SIZE} (a grown read-ahead would hold at most one such payload).
   */
  static final int LARGE_PAYLOAD = LARGE_SIZE / 2;

  /** A read that filled the read-ahead and held this many requests is a burst: grow. */
  private static final int GROW_REQUESTS = 2;

  /** Reads in a row that the small read-ahead would have held: back to small when next idle. */
  private static final int SHRINK_READS = 64;

  /**
   * An idle connection gives the large read-ahead back after this long, and grows again no sooner.
   */
  private static final long SHRINK_IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final ByteBuffer small = ByteBuffer.allocateDirect(SMALL_SIZE);
  private final ByteBuffer smallStaged = small.duplicate();
  private ByteBuffer rx = small;
  private ByteBuffer staged = smallStaged; // rx's duplicate, for copying a part of it
  private boolean lastReadFilled;
  private boolean lastReadShort;
  private boolean afterLargePayload; // the last request taken carries more than LARGE_PAYLOAD
  private int requestsSinceRead;
  private int quietReads;
  private long shrinkAt = Responder.NO_DEADLINE;
  private long growNotBefore = System.nanoTime();
  private volatile int capacity = SMALL_SIZE;
  private volatile int peak = SMALL_SIZE;

  ReadAhead() {
    small.limit(0); // read mode, nothing read yet
  }

  /**
   * The unconsumed bytes, between position and limit (read mode). The object changes when the
   * read-ahead is resized: ask again after {@link #read} and {@link #idle}.
   */
  ByteBuffer buffer() {
    return rx;
  }

  /**
   * {@code n} bytes of {@link #buffer} from its position, as a separate view (for copying them
   * under locks without moving the buffer's position); valid until the next {@link #read}.
   */
  ByteBuffer slice(int n) {
    staged.limit(rx.position() + n).position(rx.position());
    return staged;
  }

  /** How many bytes are read and not consumed. */
  int remaining() {
    return rx.remaining();
  }

  /** Drops {@code n} unconsumed bytes (taken, or skipped); the caller checked they are there. */
  void consume(int n) {
    rx.position(rx.position() + n);
  }

  /** One request was taken from the buffer (counts towards a burst). */
  void requestTaken() {
    requestsSinceRead++;
    afterLargePayload = false;
  }

  /**
   * The request just taken places {@code n} payload bytes. After one of more than {@link
   * #LARGE_PAYLOAD}, the next read takes at most a small read-ahead's worth, whatever the size: the
   * next request is likely large too, and its payload then goes from the socket straight into its
   * region instead of through the read-ahead and a second copy. Smaller payloads keep the large
   * reads: several of them per read save more system calls than their copy costs (4 KiB records
   * read 4 KiB at a time ran 25-45 % slower).
   */
  void payloadFollows(int n) {
    afterLargePayload = n > LARGE_PAYLOAD;
  }

  /**
   * Whether the last read took less than there was room for, i.e. all the socket had; clears it.
   * The next look then goes through the selector, not a read that would mostly find nothing (one
   * system call less per wake-up).
   */
  boolean takeShortRead() {
    boolean s = lastReadShort;
    lastReadShort = false;
    return s;
  }

  /**
   * Reads more bytes from {@code channel}, first growing for a burst.
   *
   * @return bytes read, 0 when none were ready
   * @throws EOFException when the peer closed the connection
   */
  int read(ReadableByteChannel channel) throws IOException {
    return read(channel, Integer.MAX_VALUE);
  }

  /**
   * Reads at most {@code max} (> 0) more bytes from {@code channel}, first growing for a burst: a
   * discard takes no more than its drive may still move, so nothing it read is left over.
   *
   * @return bytes read, 0 when none were ready
   * @throws EOFException when the peer closed the connection
   */
  int read(ReadableByteChannel channel, int max) throws IOException {
    if (lastReadFilled
        && requestsSinceRead >= GROW_REQUESTS
        && rx == small
        && System.nanoTime() - growNotBefore >= 0) {
      resize(ByteBuffer.allocateDirect(LARGE_SIZE));
    }
    rx.compact();
    if (afterLargePayload && rx.position() < SMALL_SIZE) {
      rx.limit(SMALL_SIZE);
    }
    if (max < rx.remaining()) {
      rx.limit(rx.position() + max);
    }
    int room = rx.remaining();
    int n;
    try {
      n = channel.read(rx);
    } finally {
      rx.flip();
    }
    if (n < 0) {
      throw new EOFException("peer closed the connection");
    }
    lastReadShort = n > 0 && n < room;
    if (n > 0) {
      lastReadFilled = n == room;
      requestsSinceRead = 0;
      quietReads = n > SMALL_SIZE ? 0 : quietReads + 1;
      shrinkAt = Responder.NO_DEADLINE;
    }
    return n;
  }

  /**
   * Nothing buffered, nothing to read: a large read-ahead goes back to small once the connection
   * has been quiet for {@link #SHRINK_READS} reads or idle for {@link #SHRINK_IDLE_NANOS}.
   *
   * @return when to look again for that, or {@link Responder#NO_DEADLINE}
   */
  long idle() {
    if (rx == small) {
      return Responder.NO_DEADLINE;
    }
    long now = System.nanoTime();
    if (quietReads >= SHRINK_READS || (shrinkAt != Responder.NO_DEADLINE && now - shrinkAt >= 0)) {
      resize(small); // what is left is less than a header
      // A peer alternating bursts and pauses gets at most one allocation a second from us.
      growNotBefore = now + SHRINK_IDLE_NANOS;
      return Responder.NO_DEADLINE;
    }
    if (shrinkAt == Responder.NO_DEADLINE) {
      shrinkAt = now + SHRINK_IDLE_NANOS;
    }
    return shrinkAt;
  }

  /** The current size (any thread). */
  int capacity() {
    return capacity;
  }

  /** The largest it has been on this connection (any thread). */
  int peak() {
    return peak;
  }

  /**
   * Moves what {@link #rx} holds into {@code next} (large, or {@link #small}), which it becomes.
   */
  private void resize(ByteBuffer next) {
    next.clear();
    next.put(rx).flip();
    rx = next;
    capacity = next.capacity();
    if (next.capacity() > peak) {
      peak = next.capacity();
    }
    staged = next == small ? smallStaged : next.duplicate();
    quietReads = 0;
    shrinkAt = Responder.NO_DEADLINE;
  }
}
