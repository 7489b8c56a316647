package io.srdma.bench.transport;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * This process's live threads, each attributed to the host, the clients or the bench, for a {@link
 * LoadRun} whose host and clients share the process.
 *
 * <p>How: the bench's are those alive before the host started (the JVM's and the command's) and
 * those named {@code srdma-load-*}; the host's are those named {@code srdma-host-*} and those
 * started while the host started, before any client existed (its soft device's acceptor, timer and
 * responder threads, named {@code srdma-soft-*} by device); every other thread is the clients'
 * (their control, timer and completion threads, their soft devices' threads, and any pool thread
 * their completions ran on), grouped by name with digits replaced by {@code N}.
 *
 * <p>Thread safety: immutable.
 */
public record ThreadCensus(int host, int client, int bench, Map<String, Integer> clientByName) {
  static final String HOST_PREFIX = "srdma-host-";
  static final String BENCH_PREFIX = "srdma-load-";

  /** A live thread: its id and name. */
  record Live(long id, String name) {}

  /** Attributes {@code live} threads as the class comment says. */
  static ThreadCensus classify(List<Live> live, Set<Long> beforeHost, Set<Long> hostStart) {
    int host = 0;
    int client = 0;
    int bench = 0;
    Map<String, Integer> byName = new TreeMap<>();
    for (Live t : live) {
      if (beforeHost.contains(t.id()) || t.name().startsWith(BENCH_PREFIX)) {
        bench++;
      } else if (hostStart.contains(t.id()) || t.name().startsWith(HOST_PREFIX)) {
        host++;
      } else {
        client++;
        byName.merge(t.name().replaceAll("[0-9]+", "N"), 1, Integer::sum);
      }
    }
    return new ThreadCensus(host, client, bench, byName);
  }

  /** The live threads now (names only, no stacks). */
  static List<Live> live() {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    List<Live> out = new ArrayList<>();
    for (ThreadInfo i : mx.getThreadInfo(mx.getAllThreadIds())) {
      if (i != null) { // ended meanwhile
        out.add(new Live(i.getThreadId(), i.getThreadName()));
      }
    }
    return out;
  }

  /** The ids of the live threads now. */
  static Set<Long> ids() {
    Set<Long> out = new java.util.HashSet<>();
    for (long id : ManagementFactory.getThreadMXBean().getAllThreadIds()) {
      out.add(id);
    }
    return out;
  }

  /** The live threads now, attributed. */
  static ThreadCensus take(Set<Long> beforeHost, Set<Long> hostStart) {
    return classify(live(), beforeHost, hostStart);
  }

  /** The client threads' names, most frequent first, as {@code name ×count} (at most {@code n}). */
  public String topClientNames(int n) {
    List<Map.Entry<String, Integer>> e = new ArrayList<>(clientByName.entrySet());
    e.sort((a, b) -> b.getValue() - a.getValue());
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < Math.min(n, e.size()); i++) {
      sb.append(i == 0 ? "" : ", ")
          .append(e.get(i).getKey())
          .append(" ×")
          .append(e.get(i).getValue());
    }
    if (e.size() > n) {
      sb.append(", … (").append(e.size() - n).append(" more names)");
    }
    return sb.toString();
  }
}
