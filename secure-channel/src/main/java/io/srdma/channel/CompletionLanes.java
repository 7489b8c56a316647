package io.srdma.channel;

import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.VerbsException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The completion lanes of one {@link SharedDeviceContext}: a fixed number ({@value
 * #COUNT_PROP_NAME}, default {@link #COUNT_DEFAULT}) of {@link CompletionLane}s, each one
 * completion queue and one poller thread, whatever the number of clients. A joining client takes
 * the lane with the fewest clients whose queue can still grow by its need (a queue holds at most
 * the device's {@code maxCqe} completions, tens of thousands on rxe: some hundreds of clients of 64
 * staging slots per lane; the connect fails with the provider's INVALID_ARGUMENT when every lane is
 * full). A lane whose queue failed is retired (its clients have lost their data path; it is closed
 * when the last of them leaves) and a fresh lane of the same index takes its place for later
 * clients. Opened with the shared context, closed with it when the last client is gone. Thread-safe
 * (this object's monitor, held to join, retire and close).
 */
final class CompletionLanes implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(CompletionLanes.class);

  /** System property: how many lanes (completion queues and poller threads) a process has. */
  static final String COUNT_PROP_NAME = "srdma.client.completionLanes";

  /** 2, or 1 on a machine with one CPU. */
  static final int COUNT_DEFAULT = Runtime.getRuntime().availableProcessors() > 1 ? 2 : 1;

  /** The most lanes the property may ask for. */
  static final int COUNT_MAX = 16;

  private final DeviceContext context;
  private final CompletionLane[] lanes;
  private final List<CompletionLane> retired = new ArrayList<>();
  private boolean closed;

  CompletionLanes(DeviceContext context) {
    this.context = context;
    this.lanes = new CompletionLane[count()];
    try {
      for (int k = 0; k < lanes.length; k++) {
        lanes[k] = new CompletionLane(context, k);
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** The configured number of lanes ({@value #COUNT_PROP_NAME}, 1..{@value #COUNT_MAX}). */
  static int count() {
    String value = System.getProperty(COUNT_PROP_NAME);
    if (value == null) {
      return COUNT_DEFAULT;
    }
    try {
      int n = Integer.parseInt(value.trim());
      if (n >= 1 && n <= COUNT_MAX) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    LOG.warn(
        "{}={} is not 1..{}; using {} completion lanes",
        COUNT_PROP_NAME,
        value,
        COUNT_MAX,
        COUNT_DEFAULT);
    return COUNT_DEFAULT;
  }

  /**
   * Joins the lane with the fewest clients, reserving {@code need} completions on its queue (grown
   * first): create the client's queue pair on the lane's queue afterwards, then {@link
   * CompletionLane#register} it; {@link #leave} after destroying it.
   */
  synchronized CompletionLane join(int need, int idleSpins) {
    if (closed) {
      throw new IllegalStateException("completion lanes are closed");
    }
    Integer[] order = new Integer[lanes.length];
    for (int k = 0; k < lanes.length; k++) {
      if (lanes[k].failed()) {
        replace(k);
      }
      order[k] = k;
    }
    java.util.Arrays.sort(order, java.util.Comparator.comparingInt(k -> lanes[k].clients()));
    VerbsException full = null;
    for (int k : order) {
      try {
        lanes[k].reserve(need, idleSpins);
        return lanes[k];
      } catch (VerbsException e) {
        // this lane's queue cannot grow past the device's maxCqe: try a fuller one with room
        full = e;
      }
    }
    throw full;
  }

  /** A client of {@code lane} leaves after its queue pair was destroyed ({@code qpn} -1: none). */
  void leave(CompletionLane lane, int qpn, int need) {
    lane.release(qpn, need);
    synchronized (this) {
      if (lane.clients() == 0 && retired.remove(lane)) {
        lane.close();
      }
    }
  }

  /** A failed lane's place goes to a fresh one; the failed one closes when its clients left. */
  private void replace(int k) {
    CompletionLane failed = lanes[k];
    lanes[k] = new CompletionLane(context, k);
    if (failed.clients() == 0) {
      failed.close();
    } else {
      retired.add(failed);
    }
    LOG.warn("{}: replaced a failed completion lane", failed.name());
  }

  /** Clients per lane now (tests). */
  synchronized int[] clientsPerLane() {
    int[] n = new int[lanes.length];
    for (int k = 0; k < lanes.length; k++) {
      n[k] = lanes[k].clients();
    }
    return n;
  }

  /** Stops every lane's thread (bounded joins) and destroys their queues. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (CompletionLane lane : lanes) {
      if (lane != null) {
        lane.close();
      }
    }
    for (CompletionLane lane : retired) {
      lane.close();
    }
    retired.clear();
  }
}
