package io.srdma.host;

import io.srdma.verbs.CompletionProgress;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.CpuSet;
import io.srdma.verbs.DeviceContext;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host's opener threads ({@link OpenerThread}), each with its own completion queue. A session
 * is assigned to the least loaded opener when its queue pair is made and keeps it until it ends.
 * Thread-safe.
 */
final class OpenerPool implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(OpenerPool.class);

  private final List<OpenerThread> openers;

  private OpenerPool(List<OpenerThread> openers) {
    this.openers = openers;
  }

  /**
   * Makes {@code count} openers, each with a completion queue of {@code capacity} entries (none
   * started), to run on {@code cpus} (null: unpinned); {@code progress} says whether each opener
   * also places its sessions' incoming requests ({@link HostOptions#openerProgress}).
   */
  static OpenerPool create(
      String name,
      DeviceContext device,
      int count,
      int capacity,
      int maxRecordPayload,
      CpuSet cpus,
      CompletionProgress progress) {
    List<OpenerThread> out = new ArrayList<>(count);
    boolean ok = false;
    try {
      for (int i = 0; i < count; i++) {
        CompletionQueue cq = device.createCompletionQueue(capacity, progress);
        try {
          // the opener's plaintext buffer asks the AEAD selection, which may refuse (forced and
          // unavailable): the queue made for it is closed too
          out.add(new OpenerThread(name + "-opener-" + i, cq, maxRecordPayload, cpus));
        } catch (RuntimeException | Error e) {
          cq.close();
          throw e;
        }
      }
      ok = true;
      return new OpenerPool(List.copyOf(out));
    } finally {
      if (!ok) {
        for (OpenerThread o : out) {
          o.queue().close();
        }
      }
    }
  }

  /**
   * Starts every opener.
   *
   * @throws io.srdma.verbs.VerbsException an opener could not be pinned to its CPUs (close the
   *     pool)
   */
  void start() {
    for (OpenerThread o : openers) {
      o.start();
    }
  }

  int size() {
    return openers.size();
  }

  /** The opener a new session's records go to: the one with the fewest sessions now. */
  synchronized OpenerThread assign() {
    OpenerThread best = openers.get(0);
    for (OpenerThread o : openers) {
      if (o.load < best.load) {
        best = o;
      }
    }
    best.load++;
    return best;
  }

  /** A session assigned to {@code o} ended (its queue pair is closed). */
  synchronized void release(OpenerThread o) {
    o.load--;
  }

  /** Sessions assigned to each opener now, in opener order. */
  synchronized int[] loads() {
    int[] out = new int[openers.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = openers.get(i).load;
    }
    return out;
  }

  /** Every opener stops taking completions; drains waiting return (the host is closing). */
  void stop() {
    for (OpenerThread o : openers) {
      o.stop();
    }
  }

  /** Stops and joins the threads, then closes their queues (after every queue pair closed). */
  @Override
  public void close() {
    stop();
    for (OpenerThread o : openers) {
      try {
        o.thread().join(10_000);
        if (o.thread().isAlive()) {
          LOG.warn("{} did not stop within 10 s", o.thread().getName());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    for (OpenerThread o : openers) {
      o.queue().close();
    }
  }
}
