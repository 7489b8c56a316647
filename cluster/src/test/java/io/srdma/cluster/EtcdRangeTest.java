package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Paged prefix reads: every entry across pages, at one revision; oversized entries skipped. */
@Timeout(120)
class EtcdRangeTest {
  private static final String PREFIX = "/srdma/range";

  @TempDir Path dir;
  private EtcdTestCluster etcd;
  private EtcdLink link;

  @BeforeEach
  void start() throws Exception {
    etcd = EtcdTestCluster.start(dir.resolve("etcd"));
    link = EtcdLink.open(etcd.clientConfig(PREFIX, null));
  }

  @AfterEach
  void stop() {
    if (link != null) {
      link.close();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  private void putAll(List<ByteSequence> keys, List<ByteSequence> values) {
    for (int i = 0; i < keys.size(); i += 200) {
      List<CompletableFuture<?>> puts = new ArrayList<>();
      for (int j = i; j < Math.min(keys.size(), i + 200); j++) {
        puts.add(link.client().getKVClient().put(keys.get(j), values.get(j)));
      }
      // not link.await: its 2 s request timeout is short for megabytes on a loaded machine
      try {
        CompletableFuture.allOf(puts.toArray(new CompletableFuture<?>[0]))
            .get(60, TimeUnit.SECONDS);
      } catch (Exception e) {
        throw new AssertionError("putting test entries", e);
      }
    }
  }

  @Test
  void shouldReturnEveryEntryAcrossPagesAtOneRevision() {
    int n = EtcdRange.PAGE_KEYS * 3 + 17;
    List<ByteSequence> keys = new ArrayList<>();
    List<ByteSequence> values = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      keys.add(bytes(PREFIX + "/hosts/h" + i + "/sessions"));
      values.add(bytes(Integer.toString(i)));
    }
    putAll(keys, values);
    long before =
        link.await(link.client().getKVClient().get(bytes(PREFIX + "/x")), "rev")
            .getHeader()
            .getRevision();

    List<KeyValue> seen = new ArrayList<>();
    EtcdRange.Result r =
        EtcdRange.scan(
            link,
            link.keys().hostsPrefix(),
            false,
            PolicyStatus.MAX_HOST_VALUE_BYTES,
            "test",
            kv -> {
              seen.add(kv);
              if (seen.size() == 10) {
                // written after the first page: not seen, the pages are at one revision
                link.await(
                    link.client()
                        .getKVClient()
                        .put(bytes(PREFIX + "/hosts/zz/sessions"), bytes("1")),
                    "late put");
              }
            });
    assertEquals(n, seen.size());
    assertEquals(0, r.skipped());
    assertEquals(before, r.revision());
    assertEquals(n + 1, PolicyStatus.read(link).sessions().size()); // a new read sees the late put
    assertEquals(n + 1, countKeys()); // a new read sees the late put
  }

  private int countKeys() {
    int[] c = {0};
    EtcdRange.scan(link, link.keys().hostsPrefix(), true, 0, "count", kv -> c[0]++);
    return c[0];
  }

  @Test
  void shouldListThousandsOfGrantsAcrossPages() {
    int n = 2_500;
    List<ByteSequence> keys = new ArrayList<>();
    List<ByteSequence> values = new ArrayList<>();
    Instant exp = Instant.now().plus(Duration.ofMinutes(5));
    for (int i = 0; i < n; i++) {
      ClusterGrant g =
          new ClusterGrant(
              "h" + (i % 7), i, "acme", "srdma://acme/p" + i, "kv", 0, 4096, "read", exp);
      keys.add(link.keys().grant(g.host(), i));
      values.add(ByteSequence.from(g.toJson()));
    }
    putAll(keys, values);
    assertEquals(n, GrantDirectory.list(link).size());
  }

  @Test
  void shouldSkipOversizedEntriesWithoutFailingTheRead() {
    byte[] big = new byte[1_400_000];
    Arrays.fill(big, (byte) 'x');
    List<ByteSequence> keys = new ArrayList<>();
    List<ByteSequence> values = new ArrayList<>();
    for (int i = 0; i < 5; i++) { // 7 MB in all: one unpaged read is refused by gRPC
      keys.add(bytes(PREFIX + "/hosts/h2/junk" + i));
      values.add(ByteSequence.from(big));
    }
    for (int i = 0; i < 50; i++) {
      keys.add(bytes(PREFIX + "/hosts/h" + i + "/sessions"));
      values.add(bytes("3"));
    }
    putAll(keys, values);
    List<String> seen = new ArrayList<>();
    EtcdRange.Result r =
        EtcdRange.scan(
            link,
            link.keys().hostsPrefix(),
            false,
            PolicyStatus.MAX_HOST_VALUE_BYTES,
            "test",
            kv -> seen.add(kv.getKey().toString(StandardCharsets.UTF_8)));
    assertEquals(50, seen.size());
    assertEquals(5, r.skipped());
    assertEquals(50, PolicyStatus.read(link).sessions().size());
    assertTrue(seen.stream().noneMatch(k -> k.contains("junk")));
  }

  @Test
  void shouldEscapeKeysInLogLines() {
    assertEquals(
        "'a/b\\x0a\\x27'",
        EtcdRange.escape(ByteSequence.from(new byte[] {'a', '/', 'b', '\n', '\''})));
  }
}
