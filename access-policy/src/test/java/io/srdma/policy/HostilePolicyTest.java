package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hostile policy text, generated here (never committed): every case is refused with one clear
 * {@code file:line:column: reason}, flagged {@link PolicyRejectedException#limitExceeded()} where a
 * hostile-input limit was hit, and read on a thread with a small stack, which proves that no depth
 * of input turns into recursion.
 */
class HostilePolicyTest {
  private static final String HEAD = "version: 1\ntenants:\n";

  @Test
  @Timeout(30)
  void shouldRefuseDeepFlowNesting() {
    PolicyRejectedException e = rejectOnSmallStack(HEAD + "  acme: " + "[".repeat(1500) + "\n");
    assertOneLimitError(e, "p:3:", "nested more than " + BoundedYaml.MAX_DEPTH);
    // the 33rd collection: root mapping, tenants mapping, then 31 '[' at columns 9..39
    assertEquals("p:3:39", position(e));
    assertOneLimitError(
        rejectOnSmallStack(HEAD + "  acme: " + "{a: ".repeat(1500) + "\n"), "p:3:", "nested");
  }

  @Test
  @Timeout(30)
  void shouldRefuseDeepBlockNesting() {
    StringBuilder b = new StringBuilder(HEAD);
    for (int i = 0; i < 1500; i++) {
      b.append("  ".repeat(i + 1)).append("a:\n");
    }
    b.append("  ".repeat(1501)).append("x\n");
    assertOneLimitError(rejectOnSmallStack(b.toString()), "p:", "nested more than");
    // compact block lists: "- - - - ..." on one line
    assertOneLimitError(
        rejectOnSmallStack(HEAD + "  acme:\n    " + "- ".repeat(1500) + "x\n"),
        "p:4:",
        "nested more than");
  }

  @Test
  @Timeout(30)
  void shouldRefuseAliasBombsWithoutExpandingThem() {
    StringBuilder b = new StringBuilder(HEAD + "  acme: {}\nconsole:\n  a0: &a0 [lol, lol]\n");
    for (int i = 1; i < 30; i++) {
      b.append("  a").append(i).append(": &a").append(i);
      b.append(" [*a").append(i - 1).append(", *a").append(i - 1).append("]\n");
    }
    PolicyRejectedException e = rejectOnSmallStack(b.toString());
    assertTrue(e.limitExceeded());
    assertTrue(e.errors().get(0).reason().startsWith("anchors are not allowed"), e.getMessage());
    assertTrue(
        e.errors().stream().anyMatch(x -> x.reason().startsWith("aliases are not allowed")),
        e.getMessage());
    // a merge key is an alias too
    PolicyRejectedException merge = rejectOnSmallStack(HEAD + "  acme: {<<: *nothing}\n");
    assertTrue(merge.limitExceeded());
  }

  @Test
  @Timeout(60)
  void shouldRefuseHugeDocuments() {
    PolicyRejectedException tooBig =
        assertThrows(
            PolicyRejectedException.class,
            () -> new PolicyLoader(4096).parse("p", HEAD + "#" + "x".repeat(5000) + "\n"));
    assertOneLimitError(tooBig, "p:1:1:", "over the limit of 4096 bytes");
    // small in bytes, huge in nodes: 1,000,001 one-letter list items (2 MB)
    String many = HEAD + "  acme: [" + "a,".repeat(BoundedYaml.MAX_NODES) + "a]\n";
    assertOneLimitError(rejectOnSmallStack(many), "p:3:", "more than " + BoundedYaml.MAX_NODES);
  }

  @Test
  @Timeout(60)
  void shouldStillReadALargeLegitimatePolicy() {
    // 1,000 tenants of 10 roles and 10 peers, as the policy benchmarks load: within every limit
    StringBuilder b = new StringBuilder(HEAD);
    for (int t = 0; t < 1000; t++) {
      b.append("  t").append(t).append(":\n    regions:\n");
      for (String r : new String[] {"kvcache", "params", "features", "scratch"}) {
        b.append("      ").append(r).append(": {size: 1GiB}\n");
      }
      b.append("    roles:\n");
      for (int r = 0; r < 10; r++) {
        b.append("      role").append(r).append(":\n");
        b.append("        permissions: [\"region:read:scratch\", \"region:*:features\"]\n");
        b.append("        operations: [read, write]\n        max-bytes-per-grant: 64MiB\n");
        b.append("        max-ttl: 10m\n        max-live-grants: 1000000\n");
      }
      b.append("    peers:\n");
      for (int r = 0; r < 10; r++) {
        b.append("      - identity: srdma://t").append(t).append("/peer").append(r);
        b.append(r % 2 == 0 ? "-*" : "").append("\n        roles: [role").append(r).append("]\n");
      }
    }
    assertEquals(1000, new PolicyLoader().parse("big", b.toString()).tenants().size());
  }

  @Test
  void shouldRefuseTextThatBreaksTheCodePointLimit() {
    BoundedYaml.RejectedException e =
        assertThrows(
            BoundedYaml.RejectedException.class,
            () -> BoundedYaml.compose("p", "a: b\nc: dé\n", 8));
    BoundedYaml.Problem p = e.problems().get(0);
    assertEquals(List.of(2, 4), List.of(p.line(), p.column()));
    assertTrue(p.limit() && p.reason().startsWith("more than 8 characters"), p.reason());
  }

  @Test
  void shouldRefuseBadCodePointsWithTheirPosition() {
    String[][] cases = {
      {"\u0007", "a control character"},
      {"\u007f", "a control character"},
      {"\u0085", "a control character"},
      {"\u202e", "a bidirectional control"},
      {"\u2066", "a bidirectional control"},
      {"\ufdd0", "a non-character"},
      {"\uffff", "a non-character"},
      {new String(Character.toChars(0x1fffe)), "a non-character"},
      {"\ufeff", "a byte-order mark after the start"},
    };
    for (String[] c : cases) {
      String yaml = HEAD + "  acme:\n    peers: [x" + c[0] + "]\n";
      PolicyRejectedException e =
          assertThrows(
              PolicyRejectedException.class, () -> new PolicyLoader().parse("p", yaml), c[1]);
      assertOneLimitError(e, "p:4:14:", c[1]);
    }
    // an unpaired surrogate cannot arrive as UTF-8 (the decoder refuses it), only as a String
    BoundedYaml.RejectedException e =
        assertThrows(
            BoundedYaml.RejectedException.class,
            () -> BoundedYaml.compose("p", "a: \ud800\n", 100));
    assertTrue(e.problems().get(0).reason().contains("unpaired surrogate"));
    byte[] cesu = "a: \u00ff\n".getBytes(StandardCharsets.UTF_8);
    cesu[3] = (byte) 0xed;
    cesu[4] = (byte) 0xa0;
    assertOneLimitError(
        assertThrows(PolicyRejectedException.class, () -> new PolicyLoader().parse("p", cesu)),
        "p:1:1:",
        "not valid UTF-8");
    // tab, CR LF and a leading byte-order mark are fine
    new PolicyLoader().parse("p", "\ufeffversion: 1\r\ntenants: {} # a\ttab\r\n");
  }

  @Test
  void shouldReadCharactersOutsideTheBmpAtAnyOffset() {
    // snakeyaml-engine 2.10 reads past its 1,025-char buffer when a surrogate pair straddles it
    String emoji = new String(Character.toChars(0x1F600));
    for (int pad = 0; pad < 1100; pad++) {
      String yaml = "#" + "x".repeat(pad) + emoji.repeat(3) + "\n" + PolicyLoaderTest.MINIMAL;
      assertEquals(1, new PolicyLoader().parse("p", yaml).tenants().size(), "pad " + pad);
    }
    // and in a value: an ordinary error, not an IndexOutOfBoundsException
    String version = "version: " + "9".repeat(1014) + emoji + "\ntenants: {}\n";
    PolicyRejectedException e =
        assertThrows(PolicyRejectedException.class, () -> new PolicyLoader().parse("p", version));
    assertFalse(e.limitExceeded(), e.getMessage());
  }

  @Test
  void shouldRefuseExplicitTags() {
    assertOneLimitError(
        assertThrows(
            PolicyRejectedException.class,
            () -> new PolicyLoader().parse("p", "version: !!int 1\ntenants: {}\n")),
        "p:1:10:",
        "explicit tags are not allowed");
  }

  @Test
  void shouldRefuseQuotedNumbers() {
    String yaml =
        PolicyLoaderTest.MINIMAL
            .replace("version: 1", "version: \"1\"")
            .replace("max-live-grants: 2", "max-live-grants: '8'")
            .replace("max-bytes-per-grant: 1KiB", "max-bytes-per-grant: \"1024\"")
            .replace("max-ttl: 5s", "max-ttl: '5s'");
    PolicyRejectedException e =
        assertThrows(PolicyRejectedException.class, () -> new PolicyLoader().parse("p", yaml));
    assertFalse(e.limitExceeded());
    List<String> got = e.errors().stream().map(PolicyError::toString).toList();
    assertEquals(4, got.size(), got.toString());
    assertTrue(got.get(0).startsWith("p:1:10: version must be a whole number written without"));
    assertTrue(got.stream().anyMatch(s -> s.contains("max-live-grants must be a whole number")));
    assertTrue(got.stream().anyMatch(s -> s.contains("max-bytes-per-grant must be a size")));
    assertTrue(got.stream().anyMatch(s -> s.contains("max-ttl must be a duration")));
  }

  @Test
  void shouldRefuseIdentitiesNoCertificateCanCarry() {
    for (String id :
        List.of(
            "srdma://acme/Trainer-*",
            "srdma://acme/trainer_1",
            "srdma://acme/-x",
            "srdma://acme/x-",
            "srdma://acme/*-",
            "srdma://acme/-*",
            "srdma://acme/x.y*",
            "srdma://acme/" + "a".repeat(64),
            "srdma://acme/" + "a".repeat(64) + "*")) {
      String yaml = PolicyLoaderTest.MINIMAL.replace("srdma://acme/w-*", id);
      PolicyRejectedException e =
          assertThrows(
              PolicyRejectedException.class, () -> new PolicyLoader().parse("p", yaml), id);
      assertEquals(1, e.errors().size(), e.getMessage());
      assertTrue(e.errors().get(0).reason().contains("can match no certificate"), e.getMessage());
    }
    for (String id :
        List.of(
            "srdma://acme/*",
            "srdma://acme/*x",
            "srdma://acme/x-*",
            "srdma://acme/*-x",
            "srdma://acme/" + "a".repeat(63) + "*",
            "srdma://acme/" + "a".repeat(63))) {
      new PolicyLoader().parse("p", PolicyLoaderTest.MINIMAL.replace("srdma://acme/w-*", id));
    }
  }

  @Test
  void shouldMatchTheNameRuleExactly() {
    // brute force over a small alphabet: canMatchName agrees with trying every middle
    String alphabet = "a-_";
    List<String> parts = List.of("", "a", "-", "_", "a-", "-a", "aa", "a-a");
    List<String> middles = List.of("", "a", "-", "_", "a-", "-a", "aa", "a-a", "--");
    for (String p : parts) {
      for (String s : parts) {
        boolean any = false;
        for (String m : middles) {
          any |= PeerIdentity.isName(p + m + s);
        }
        assertEquals(any, PeerIdentity.canMatchName(p, s), p + "*" + s + " over " + alphabet);
      }
    }
  }

  @Test
  void shouldReserveTheHostTenantAndTheCertificateNameRule() {
    PolicyRejectedException host =
        assertThrows(
            PolicyRejectedException.class,
            () -> new PolicyLoader().parse("p", HEAD + "  host: {}\n"));
    assertEquals(
        "p:3:3: tenant name 'host' is reserved: host certificates are srdma://host/...",
        host.errors().get(0).toString());
    for (String name : List.of("acme_corp", "acme-", "Acme", "a".repeat(64))) {
      PolicyRejectedException e =
          assertThrows(
              PolicyRejectedException.class,
              () -> new PolicyLoader().parse("p", HEAD + "  " + name + ": {}\n"),
              name);
      assertTrue(e.errors().get(0).reason().contains("the rule certificates follow"), name);
    }
    assertNotNull(new PolicyLoader().parse("p", HEAD + "  hosts: {}\n  a: {}\n"));
  }

  @Test
  void shouldNotEchoAHugeValue() {
    String yaml = "version: " + "9".repeat(100_000) + "x\ntenants: {}\n";
    PolicyRejectedException e =
        assertThrows(PolicyRejectedException.class, () -> new PolicyLoader().parse("p", yaml));
    assertTrue(e.getMessage().length() < 1000, "message of " + e.getMessage().length());
  }

  private static void assertOneLimitError(
      PolicyRejectedException e, String positionPrefix, String reason) {
    assertEquals(1, e.errors().size(), e.getMessage());
    assertTrue(e.limitExceeded(), e.getMessage());
    String line = e.errors().get(0).toString();
    assertTrue(line.startsWith(positionPrefix), line);
    assertTrue(line.contains(reason), line);
  }

  private static String position(PolicyRejectedException e) {
    PolicyError p = e.errors().get(0);
    return p.source() + ":" + p.line() + ":" + p.column();
  }

  // 256 KiB of stack: a recursive reader overflows long before 1,500 levels
  private static PolicyRejectedException rejectOnSmallStack(String yaml) {
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread t =
        new Thread(
            null,
            () -> {
              try {
                new PolicyLoader().parse("p", yaml);
              } catch (Throwable x) {
                thrown.set(x);
              }
            },
            "hostile-policy-reader",
            256 * 1024);
    t.start();
    try {
      t.join(30_000);
    } catch (InterruptedException x) {
      Thread.currentThread().interrupt();
      throw new AssertionError(x);
    }
    assertFalse(t.isAlive(), "reader still running");
    Throwable x = thrown.get();
    if (x instanceof PolicyRejectedException p) {
      return p;
    }
    throw new AssertionError("expected a PolicyRejectedException, got " + x, x);
  }
}
