package io.srdma.host;

import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The send side of a session's queue pair, shared by two posters: grant scoping ({@link
 * GrantBinder}: BIND_MW and LOCAL_INV, one at a time, each waited for by its work-request id) and
 * receive credits ({@link ReceiveCredits}: RDMA WRITEs of the opener thread, counted, never waited
 * for). One lock covers every post of either and every poll of the send completion queue, so
 * neither ever takes the other's completion; the opener only ever tries the lock ({@link
 * #tryLock}), so a scoping operation waiting for its completion never holds up the opening of
 * records.
 *
 * <p>Thread-safe through its lock; every method but {@link #lock}, {@link #tryLock} and {@link
 * #unlock} needs it held.
 */
final class SessionSendQueue {
  /** The work-request id bit of credit writes; scoping's ids count up from 1 and never reach it. */
  static final long CREDIT = 1L << 62;

  private final CompletionQueue cq;
  private final ReentrantLock lock = new ReentrantLock();
  private final WorkCompletion[] polled = new WorkCompletion[16];
  private int creditsInFlight; // guarded by lock

  SessionSendQueue(CompletionQueue cq) {
    this.cq = cq;
    for (int i = 0; i < polled.length; i++) {
      polled[i] = new WorkCompletion();
    }
  }

  void lock() {
    lock.lock();
  }

  boolean tryLock() {
    return lock.tryLock();
  }

  void unlock() {
    lock.unlock();
  }

  /**
   * Waits (bounded by {@code timeout}) for the completion of scoping's work request {@code wrId},
   * counting the credit writes that complete meanwhile.
   *
   * @return its status, or null when it did not complete in time
   */
  WcStatus await(long wrId, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return null;
      }
      int n = cq.await(polled, Duration.ofNanos(left));
      WcStatus found = null;
      for (int i = 0; i < n; i++) {
        WorkCompletion wc = polled[i];
        if ((wc.wrId() & CREDIT) != 0) {
          creditsInFlight--;
        } else if (wc.wrId() == wrId) {
          found = wc.status(); // the rest of the batch is still counted
        }
      }
      if (found != null) {
        return found;
      }
    }
  }

  /**
   * Credit writes posted and not completed yet, after taking the completions already queued
   * (without waiting). A completion of scoping's seen here is one whose wait had timed out:
   * dropped, as {@link #await} drops it.
   */
  int creditsInFlight() {
    int n;
    while ((n = cq.poll(polled)) > 0) {
      for (int i = 0; i < n; i++) {
        if ((polled[i].wrId() & CREDIT) != 0) {
          creditsInFlight--;
        }
      }
      if (n < polled.length) {
        break;
      }
    }
    return creditsInFlight;
  }

  /** A credit write was posted. */
  void creditPosted() {
    creditsInFlight++;
  }
}
