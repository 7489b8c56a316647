package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Arrays;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Paged range reads over one prefix, all pages at the revision of the first, unless that revision
 * is compacted during the read: etcd lets any client compact, and a host doing it in a loop failed
 * every read of more than a page, so the rest is then read at the newest revision (logged). Either
 * way every entry present from the first page's revision until its own page is read is listed;
 * followers open their watch before the read, so what changes meanwhile is watched too.
 *
 * <p>Why: etcd puts no byte limit on a range answer and gRPC refuses one over 4 MiB
 * (RESOURCE_EXHAUSTED), so one unpaged read of a prefix that any host may write under (its own
 * {@code requests/HOST/}, {@code hosts/HOST/}, {@code grants/HOST/}) fails for every reader once
 * that host wrote 4 MiB. A page holds at most {@value #PAGE_KEYS} keys and aims at {@value
 * #PAGE_BYTES} bytes (the next page's limit follows the mean entry size so far); a page refused as
 * too large is read again at half the limit, down to one key; a single entry gRPC still refuses is
 * skipped (its key read alone). A value over the caller's maximum is skipped too. Each skip is
 * logged once per read, key escaped, and counted in {@link Result#skipped()}: never fatal.
 */
final class EtcdRange {
  /** The most keys one page asks for. */
  static final int PAGE_KEYS = 1_000;

  /** The bytes one page aims at (a quarter of gRPC's 4 MiB message limit). */
  static final int PAGE_BYTES = 1 << 20;

  private static final Logger LOG = LoggerFactory.getLogger(EtcdRange.class);

  private EtcdRange() {}

  /**
   * What a read found besides its entries.
   *
   * @param revision the revision of the first page (the others were read at it, or, once it was
   *     compacted, at the newest)
   * @param skipped entries skipped (value over the maximum, or an entry too large to read)
   */
  record Result(long revision, long skipped) {}

  /**
   * Reads every key under {@code prefix}, handing each entry whose value is at most {@code
   * maxValueBytes} to {@code each}, in key order.
   *
   * @param keysOnly read keys only (values are empty; {@code maxValueBytes} does not apply)
   * @throws ClusterException {@code UNAVAILABLE} if etcd does not answer (after one retry per page)
   */
  static Result scan(
      EtcdLink link,
      ByteSequence prefix,
      boolean keysOnly,
      int maxValueBytes,
      String what,
      Consumer<KeyValue> each) {
    ByteSequence end = prefixEnd(prefix);
    ByteSequence from = prefix;
    long revision = 0; // of the first page
    long at = 0; // the revision pages are read at: the first page's, or 0 (the newest) once it
    // was compacted away
    long skipped = 0;
    long seen = 0;
    long seenBytes = 0;
    int limit = PAGE_KEYS;
    while (true) {
      GetResponse r;
      try {
        r = page(link, from, end, limit, keysOnly, at, what);
      } catch (ClusterException e) {
        if (at != 0 && compacted(e)) {
          // etcd lets any client compact (RBAC does not cover it): one host compacting in a loop
          // failed every read of more than a page. The rest is read as it is now; the callers'
          // watches, opened before this read, deliver whatever changed after its first page
          LOG.warn(
              "{}: revision {} was compacted during the read; the rest is read at the newest",
              what,
              at);
          at = 0;
          continue;
        }
        if (!tooLarge(e)) {
          throw e;
        }
        if (limit > 1) {
          limit = Math.max(1, limit / 2);
          continue;
        }
        // one entry gRPC cannot carry: learn its key alone and step over it
        GetResponse k = page(link, from, end, 1, true, at, what);
        if (k.getKvs().isEmpty()) {
          throw e;
        }
        if (revision == 0) {
          revision = k.getHeader().getRevision();
          at = revision;
        }
        ByteSequence key = k.getKvs().get(0).getKey();
        skipped++;
        LOG.warn("{}: skipped {}: too large to read ({})", what, escape(key), e.getMessage());
        from = next(key);
        continue;
      }
      if (revision == 0) {
        revision = r.getHeader().getRevision();
        at = revision;
      }
      for (KeyValue kv : r.getKvs()) {
        int size = kv.getKey().size() + kv.getValue().size();
        seen++;
        seenBytes += size;
        if (!keysOnly && kv.getValue().size() > maxValueBytes) {
          skipped++;
          LOG.warn(
              "{}: skipped {}: its value is {} bytes, over the {} a writer produces",
              what,
              escape(kv.getKey()),
              kv.getValue().size(),
              maxValueBytes);
          continue;
        }
        each.accept(kv);
      }
      if (!r.isMore() || r.getKvs().isEmpty()) {
        return new Result(revision, skipped);
      }
      from = next(r.getKvs().get(r.getKvs().size() - 1).getKey());
      long mean = Math.max(1, seenBytes / Math.max(1, seen));
      limit = (int) Math.max(1, Math.min(PAGE_KEYS, PAGE_BYTES / mean));
    }
  }

  private static GetResponse page(
      EtcdLink link,
      ByteSequence from,
      ByteSequence end,
      int limit,
      boolean keysOnly,
      long revision,
      String what) {
    GetOption.Builder o = GetOption.builder().withRange(end).withLimit(limit);
    if (keysOnly) {
      o.withKeysOnly(true);
    }
    if (revision > 0) {
      o.withRevision(revision);
    }
    GetOption option = o.build();
    try {
      return link.await(link.client().getKVClient().get(from, option), what);
    } catch (ClusterException e) {
      if (e.reason() != ClusterException.Reason.UNAVAILABLE || tooLarge(e)) {
        throw e;
      }
      // the first request after a member died may wait on it; the next goes to a live one
      return link.await(link.client().getKVClient().get(from, option), what);
    }
  }

  /** Whether etcd answered that the revision asked for was compacted, anywhere in the chain. */
  static boolean compacted(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof io.etcd.jetcd.common.exception.CompactedException) {
        return true;
      }
      String m = c.getMessage();
      if (m != null && m.contains("required revision has been compacted")) {
        return true;
      }
    }
    return false;
  }

  /** Whether etcd's (or gRPC's) answer was "message too large", anywhere in the cause chain. */
  static boolean tooLarge(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof StatusRuntimeException s
          && s.getStatus().getCode() == Status.Code.RESOURCE_EXHAUSTED) {
        return true;
      }
      if (c instanceof EtcdException ee
          && ee.getErrorCode() == io.etcd.jetcd.common.exception.ErrorCode.RESOURCE_EXHAUSTED) {
        return true;
      }
      // jetcd 0.8 runs on vertx-grpc, whose refusal may only say so in its message
      String m = c.getMessage();
      if (m != null && (m.contains("RESOURCE_EXHAUSTED") || m.contains("message size"))) {
        return true;
      }
    }
    return false;
  }

  /** The first key after {@code key}. */
  static ByteSequence next(ByteSequence key) {
    byte[] b = key.getBytes();
    return ByteSequence.from(Arrays.copyOf(b, b.length + 1));
  }

  /** The end of a prefix's range. */
  static ByteSequence prefixEnd(ByteSequence prefix) {
    byte[] b = prefix.getBytes();
    b[b.length - 1]++; // the prefixes end in '/', never 0xff
    return ByteSequence.from(b);
  }

  /** A key for a log line: printable ASCII as is, other bytes as \xNN, at most 200 bytes. */
  static String escape(ByteSequence key) {
    byte[] b = key.getBytes();
    StringBuilder s = new StringBuilder("'");
    int n = Math.min(b.length, 200);
    for (int i = 0; i < n; i++) {
      int c = b[i] & 0xff;
      if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
        s.append((char) c);
      } else {
        s.append(String.format("\\x%02x", c));
      }
    }
    s.append('\'');
    if (b.length > n) {
      s.append("... (").append(b.length).append(" bytes)");
    }
    return s.toString();
  }
}
