package io.srdma.bench.transport;

import java.util.Locale;

/**
 * How many messages a throughput run keeps outstanding (sent, not yet delivered) at each size, for
 * the transports that bound it themselves ({@code plain-write}, {@code sealed}). Immutable, so
 * thread-safe.
 *
 * <p>{@link #auto()} keeps up to {@value #AUTO_WINDOW_BYTES} bytes of messages in flight, at least
 * {@value #AUTO_MIN} and at most {@value #AUTO_MAX} messages, and asks for at most {@value
 * #AUTO_RING_BYTES} bytes of ring: 256 messages of up to 1 KiB, 64 of 4 KiB, 16 from 16 KiB to 2
 * MiB. The TLS baselines have no message window: their stream is bounded only by the kernel's
 * socket buffers, which start at 16 KiB to send and 128 KiB to receive (Linux's {@code
 * net.ipv4.tcp_wmem} and {@code tcp_rmem}) and grow to megabytes. A fixed window of 16 messages
 * held 1 KiB of 64 B messages in flight against TLS's tens of kilobytes; {@code auto} stays below
 * what TCP holds, and its cap of 256 messages is where the sealed channel's 64 B rate peaked in
 * docs/performance.md's sweep (session 18).
 *
 * @param fixed messages outstanding at every size, or 0 for {@link #auto()}
 */
public record PipelineDepth(int fixed) {
  /** Bytes of messages {@link #auto()} keeps in flight, at most. */
  public static final int AUTO_WINDOW_BYTES = 256 << 10;

  /** Fewest messages {@link #auto()} keeps in flight (while the ring allows). */
  public static final int AUTO_MIN = 16;

  /** Most messages {@link #auto()} keeps in flight. */
  public static final int AUTO_MAX = 256;

  /** Largest fixed depth. */
  public static final int MAX = 1024;

  /** Most ring bytes {@link #auto()} asks for (the sealed bench region is 64 MiB). */
  public static final int AUTO_RING_BYTES = 32 << 20;

  /** Validates. */
  public PipelineDepth {
    if (fixed < 0 || fixed > MAX) {
      throw new IllegalArgumentException("depth must be 1 to " + MAX + ", got " + fixed);
    }
  }

  /** The same bytes in flight at every size, see the class comment. */
  public static PipelineDepth auto() {
    return new PipelineDepth(0);
  }

  /** {@code n} messages at every size. */
  public static PipelineDepth of(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("depth must be 1 to " + MAX + ", got " + n);
    }
    return new PipelineDepth(n);
  }

  /**
   * {@code auto} or a number of messages.
   *
   * @throws IllegalArgumentException naming what was wrong
   */
  public static PipelineDepth parse(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    if (t.equals("auto")) {
      return auto();
    }
    int n;
    try {
      n = Integer.parseInt(t);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "--depth must be auto or 1 to " + MAX + ", got '" + text + "'");
    }
    if (n < 1 || n > MAX) {
      throw new IllegalArgumentException("--depth must be 1 to " + MAX + ", got " + n);
    }
    return of(n);
  }

  /** Whether the depth follows the message size. */
  public boolean isAuto() {
    return fixed == 0;
  }

  /** Messages outstanding for messages of {@code size} bytes. */
  public int forSize(int size) {
    if (size < 1) {
      throw new IllegalArgumentException("size must be positive: " + size);
    }
    if (!isAuto()) {
      return fixed;
    }
    int byWindow = Math.max(AUTO_MIN, Math.min(AUTO_MAX, AUTO_WINDOW_BYTES / size));
    return Math.max(1, Math.min(byWindow, AUTO_RING_BYTES / size));
  }

  /** The most messages outstanding at any size: {@value #AUTO_MAX} for auto, else the number. */
  public int max() {
    return isAuto() ? AUTO_MAX : fixed;
  }

  /** "auto" or the number, as the headline and JSON give it. */
  @Override
  public String toString() {
    return isAuto() ? "auto" : Integer.toString(fixed);
  }
}
