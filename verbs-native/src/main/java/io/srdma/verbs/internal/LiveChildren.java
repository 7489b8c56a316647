package io.srdma.verbs.internal;

import io.srdma.verbs.VerbsException;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;

/**
 * Counts a parent's open children so that closing it early fails with a clear BUSY error. Shared by
 * the providers; not API.
 */
public final class LiveChildren {
  private final Map<String, Integer> counts = new TreeMap<>();

  public synchronized void add(String kind) {
    counts.merge(kind, 1, Integer::sum);
  }

  public synchronized void remove(String kind) {
    counts.computeIfPresent(kind, (k, n) -> n == 1 ? null : n - 1);
  }

  public synchronized int count(String kind) {
    return counts.getOrDefault(kind, 0);
  }

  /** Throws BUSY naming what is still open, e.g. "2 memory region(s), 1 queue pair(s)". */
  public synchronized void requireNone(String verb, String parent) {
    if (counts.isEmpty()) {
      return;
    }
    StringJoiner open = new StringJoiner(", ");
    counts.forEach((k, n) -> open.add(n + " " + k + "(s)"));
    throw new VerbsException(
        VerbsException.Reason.BUSY,
        verb,
        parent + " still has open children: " + open + "; close them first");
  }
}
