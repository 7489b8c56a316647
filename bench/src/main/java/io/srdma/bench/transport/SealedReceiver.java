package io.srdma.bench.transport;

import io.srdma.host.ReceivedRecord;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

/**
 * The receiving end of sealed's bench: counts the messages in each record the host opened, checks
 * their sequence numbers (and with {@code --verify} their bytes' CRC-32C), and lets the sender wait
 * until a count was delivered — busy for a while ({@link SenderWait}), then parked until the host's
 * thread unparks it, once per wait (an unpark is a system call), never per message.
 *
 * <p>A message is one record, several messages end to end in one record (coalesced), or a message
 * of several records whose first carries the sequence number; a message counts as delivered when
 * its last byte was opened.
 *
 * <p>Threads: {@link #onRecord} on the host's opening thread (one at a time: the bench has one
 * session); {@link #awaitDelivered} and {@link #delivered} on the sender; {@link #reset} and the
 * run's results on the sender before and after a run, while no record is in flight. Allocates
 * nothing per record.
 */
final class SealedReceiver {
  private final Duration stall;
  private final AtomicLong delivered = new AtomicLong();
  private final CRC32C crc = new CRC32C();
  private final SenderWait senderWait = new SenderWait();
  private int size;
  private boolean verify;
  private long messageBytes;
  private long expected;
  private long sequenceErrors;
  private long recordsOpened;
  private volatile long lastDeliveredNanos;
  private volatile Thread waiter;
  private volatile long wakeAt = Long.MAX_VALUE; // the delivered count the parked sender waits for

  /** A receiver whose sender gives up a wait after parking for {@code stall} short of its count. */
  SealedReceiver(Duration stall) {
    this.stall = stall;
  }

  /** Starts a run of messages of {@code size} bytes, their bytes checked when {@code verify}. */
  void reset(int size, boolean verify) {
    this.size = size;
    this.verify = verify;
    expected = 0;
    sequenceErrors = 0;
    recordsOpened = 0;
    messageBytes = 0;
    crc.reset();
  }

  /** Host's opening thread: one opened record. */
  void onRecord(ReceivedRecord r) {
    onPayload(r.payload());
  }

  /** {@link #onRecord}'s work on the record's plaintext (position to limit; left unchanged). */
  void onPayload(ByteBuffer p) {
    int length = p.remaining();
    recordsOpened++;
    int messages;
    if (messageBytes == 0 && length >= size) {
      // one message, or (coalesced) several end to end: check each one's sequence number
      messages = length / size;
      if (length % size != 0) {
        sequenceErrors++;
      }
      for (int k = 0; k < messages; k++) {
        if (p.getLong(p.position() + k * size) != expected + k) {
          sequenceErrors++;
        }
      }
    } else {
      // a message of several records: its first record carries the sequence number
      if (messageBytes == 0 && p.getLong(p.position()) != expected) {
        sequenceErrors++;
      }
      messageBytes += length;
      messages = messageBytes >= size ? 1 : 0;
      if (messages == 1) {
        messageBytes = 0;
      }
    }
    if (verify) {
      int at = p.position();
      crc.update(p);
      p.position(at);
    }
    if (messages > 0) {
      expected += messages;
      lastDeliveredNanos = System.nanoTime();
      long now = delivered.addAndGet(messages);
      Thread w = waiter;
      if (w != null && now >= wakeAt) {
        LockSupport.unpark(w); // once per wait, not once per message: an unpark is a syscall
      }
    }
  }

  /** Messages delivered since this receiver was made (every run adds to it). */
  long delivered() {
    return delivered.get();
  }

  /**
   * Waits until {@code count} messages were delivered: busy for a while ({@link SenderWait}), then
   * parks until the host's opening thread unparks it (no lock, no wait/notify per message).
   *
   * @throws TimeoutException when the count was not reached within the stall time of parking
   */
  void awaitDelivered(long count) throws TimeoutException {
    if (delivered.get() >= count) {
      return;
    }
    senderWait.start();
    while (senderWait.stayBusy()) {
      if (delivered.get() >= count) {
        return;
      }
    }
    long deadline = System.nanoTime() + stall.toNanos();
    wakeAt = count;
    waiter = Thread.currentThread();
    try {
      while (delivered.get() < count) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new TimeoutException("sealed: the host delivered nothing for " + stall);
        }
        LockSupport.parkNanos(this, Math.min(left, 10_000_000L));
      }
    } finally {
      waiter = null;
      wakeAt = Long.MAX_VALUE;
    }
  }

  /** {@link System#nanoTime()} when the last message was delivered. */
  long lastDeliveredNanos() {
    return lastDeliveredNanos;
  }

  /** Messages of this run whose sequence number (or a coalesced record's length) was wrong. */
  long sequenceErrors() {
    return sequenceErrors;
  }

  /** Records the host opened in this run (coalescing makes fewer than messages). */
  long recordsOpened() {
    return recordsOpened;
  }

  /** CRC-32C of the bytes delivered in this run, 0 unless verifying. */
  long crc() {
    return verify ? crc.getValue() : 0;
  }
}
