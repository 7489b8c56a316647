package io.srdma.verbs;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The CPUs one long-lived thread is to run on, and the hand-back of whether it got there: the
 * thread pins itself first thing ({@link #apply}, on the thread) and its starter waits for the
 * outcome ({@link #awaitApplied}), so that a placement that cannot be honoured fails the start of
 * whatever owns the thread instead of leaving it running elsewhere. With no CPUs (null) both are
 * no-ops. Thread-safe; each instance serves one thread.
 */
public final class ThreadPlacement {
  /** How long a starter waits for its thread to report its placement. */
  public static final Duration REPORT_WAIT = Duration.ofSeconds(10);

  private final CpuSet cpus;
  private final CountDownLatch reported = new CountDownLatch(1);
  private volatile RuntimeException failure;

  /**
   * @param cpus the CPUs, or null to leave the thread where the scheduler puts it
   */
  public ThreadPlacement(CpuSet cpus) {
    this.cpus = cpus;
  }

  /** The CPUs asked for, or null. */
  public CpuSet cpus() {
    return cpus;
  }

  /**
   * Pins the calling thread (call it first on the thread being placed). Returns false when that
   * failed; the thread should then end without doing its work, and its starter sees the failure.
   */
  public boolean apply() {
    try {
      if (cpus != null) {
        CpuAffinity.pinCurrentThread(cpus);
      }
      return true;
    } catch (RuntimeException e) {
      failure = e;
      return false;
    } finally {
      reported.countDown();
    }
  }

  /**
   * Waits until the placed thread has reported (at most {@link #REPORT_WAIT}); returns at once when
   * there is nothing to place.
   *
   * @throws VerbsException the placement's failure, or IO when the thread did not report in time or
   *     the wait was interrupted (the interrupt flag is kept)
   */
  public void awaitApplied(String what) {
    if (cpus == null) {
      return;
    }
    try {
      if (!reported.await(REPORT_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new VerbsException(
            VerbsException.Reason.IO,
            "set_affinity",
            what + " did not report its placement on CPUs " + cpus + " within " + REPORT_WAIT);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new VerbsException(
          VerbsException.Reason.IO,
          "set_affinity",
          "interrupted waiting for " + what + " to be placed");
    }
    RuntimeException f = failure;
    if (f != null) {
      throw new VerbsException(
          f instanceof VerbsException v ? v.reason() : VerbsException.Reason.IO,
          "set_affinity",
          what + " cannot be placed: " + f.getMessage(),
          f);
    }
  }
}
