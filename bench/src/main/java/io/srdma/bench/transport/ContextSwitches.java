package io.srdma.bench.transport;

import io.srdma.verbs.internal.LinuxLibC;
import jnr.ffi.annotations.Out;

/**
 * The context switches of this whole process so far, voluntary (a thread waited: park, select, a
 * full socket) and involuntary (preempted, or yielded to a runnable thread), from {@code
 * getrusage(RUSAGE_SELF)}: every thread the process ever ran, those that ended included (a
 * transport's per-run receiver thread). On a machine with fewer cores than busy threads this is
 * what a transport's hand-offs cost beside its CPU time: each switch is a wake-up, a scheduler pass
 * and cold caches.
 *
 * <p>Linux on 64-bit CPUs only (the layout of {@code struct rusage} read here); elsewhere, or when
 * libc cannot be bound, {@link #total()} is -1. Thread-safe.
 */
final class ContextSwitches {
  /** {@code RUSAGE_SELF}. */
  private static final int SELF = 0;

  /**
   * {@code struct rusage} on LP64 Linux: two {@code struct timeval} (4 longs), then 14 longs, of
   * which {@code ru_nvcsw} and {@code ru_nivcsw} are the last two.
   */
  private static final int LONGS = 18;

  private static final int VOLUNTARY = 16;
  private static final int INVOLUNTARY = 17;

  /** libc's getrusage (public for jnr-ffi). */
  public interface LibC {
    int getrusage(int who, @Out long[] usage);
  }

  private static final LibC LIBC = LinuxLibC.bind(LibC.class);

  private ContextSwitches() {}

  /** Voluntary plus involuntary context switches of the process so far, or -1 when unknown. */
  static long total() {
    if (LIBC == null) {
      return -1;
    }
    long[] usage = new long[LONGS];
    if (LIBC.getrusage(SELF, usage) != 0) {
      return -1;
    }
    return usage[VOLUNTARY] + usage[INVOLUNTARY];
  }

  /**
   * Switches per message between two {@link #total()} readings; NaN when either is unknown or no
   * message was delivered.
   */
  static double perMessage(long before, long after, long messages) {
    if (before < 0 || after < before || messages <= 0) {
      return Double.NaN;
    }
    return (after - before) / (double) messages;
  }
}
