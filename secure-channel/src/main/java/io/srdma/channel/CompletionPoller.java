package io.srdma.channel;

import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Polls a client's completion queue and hands each batch of completions (up to {@value #BATCH} per
 * poll) to the writer or the reader on the polling thread itself. A thread of its own polls with an
 * idle strategy that spins ({@code spins} polls) before it parks in the queue's wait (woken by the
 * next completion, at most {@value #PARK_MILLIS} ms); a caller may poll too ({@link #poll()}).
 * Thread-safe: one poller at a time (a caller that finds another polling returns 0).
 */
final class CompletionPoller {
  private static final Logger LOG = LoggerFactory.getLogger(CompletionPoller.class);
  static final int BATCH = 32;
  static final int PARK_MILLIS = 100;

  private final SessionState state;
  private final CompletionQueue cq;
  private final SealedWriter writer;
  private final SealedReader reader;
  private final int spins;
  private final WorkCompletion[] wcs = new WorkCompletion[BATCH];
  private final ReentrantLock lock = new ReentrantLock();
  private final Thread thread;
  private static final Duration PARK = Duration.ofMillis(PARK_MILLIS);

  CompletionPoller(
      SessionState state, CompletionQueue cq, SealedWriter writer, SealedReader reader, int spins) {
    this.state = state;
    this.cq = cq;
    this.writer = writer;
    this.reader = reader;
    this.spins = spins;
    for (int i = 0; i < BATCH; i++) {
      wcs[i] = new WorkCompletion();
    }
    thread = new Thread(this::run, state.name + "-cq");
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** Stops the thread (after the session was marked closed), waiting at most 5 s. */
  void join() {
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Handles the completions there are now; returns how many (0 when another thread polls). */
  int poll() {
    if (!lock.tryLock()) {
      return 0;
    }
    try {
      return dispatch(cq.poll(wcs));
    } finally {
      lock.unlock();
    }
  }

  private void run() {
    int idle = 0;
    while (!state.isClosed()) {
      try {
        if (poll() > 0) {
          idle = 0;
        } else if (++idle <= spins) {
          Thread.onSpinWait();
        } else {
          idle = 0;
          lock.lock();
          try {
            dispatch(cq.await(wcs, PARK));
          } finally {
            lock.unlock();
          }
        }
      } catch (RuntimeException e) {
        if (!state.isClosed()) {
          LOG.error("{}: completion queue failed", state.name, e);
          state.dataPathFailed(WcStatus.FATAL_ERR);
        }
        return;
      }
    }
  }

  /** The caller holds the lock. */
  private int dispatch(int n) {
    long lastWrite = -1;
    WcStatus writeStatus = WcStatus.SUCCESS;
    for (int i = 0; i < n; i++) {
      WorkCompletion wc = wcs[i];
      WcStatus status = wc.status();
      state.dataPathFailed(status);
      long wrId = wc.wrId();
      if ((wrId & (SealedReader.READ_WR | SealedReader.RAW_WR)) != 0) {
        reader.onCompletion(status);
      } else if (status != WcStatus.SUCCESS) {
        if (lastWrite >= 0) {
          writer.onCompletion(lastWrite, writeStatus);
        }
        writer.onCompletion(wrId, status);
        lastWrite = -1;
      } else {
        lastWrite = wrId; // successes of one batch are reported together
        writeStatus = status;
      }
    }
    if (lastWrite >= 0) {
      writer.onCompletion(lastWrite, writeStatus);
    }
    return n;
  }
}
