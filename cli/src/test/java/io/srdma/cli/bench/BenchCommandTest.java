package io.srdma.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.bench.transport.Report;
import io.srdma.bench.transport.Transports;
import io.srdma.cli.SrdmaCommand;
import io.srdma.verbs.CpuAffinity;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

@Timeout(value = 5, unit = TimeUnit.MINUTES)
class BenchCommandTest {
  @TempDir Path dir;

  record Run(int exit, String out, String err) {}

  static Run bench(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = SrdmaCommand.newCommandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    String[] all = new String[args.length + 1];
    all[0] = "bench";
    System.arraycopy(args, 0, all, 1, args.length);
    return new Run(cl.execute(all), out.toString(), err.toString());
  }

  @Test
  @SuppressWarnings("unchecked")
  void shouldWriteJsonWithEveryFieldForEveryTransportAndSize() throws Exception {
    Path json = dir.resolve("results.json");
    Run r =
        bench(
            "--sizes", "64,4KiB",
            "--duration", "200ms",
            "--warmup", "0",
            "--depth", "4",
            "--progress", "none",
            "--json", json.toString());
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("### 64 B messages"), r.out());
    assertTrue(r.out().contains("### 4 KiB messages"), r.out());

    Map<String, Object> root = (Map<String, Object>) MiniJson.parse(Files.readString(json));
    for (String k : List.of("tool", "formatVersion", "startedAt", "command", "machine", "aead")) {
      assertTrue(root.containsKey(k), k);
    }
    Map<String, Object> aead = (Map<String, Object>) root.get("aead");
    List<String> providers = List.of("jdk", "accp", "openssl", "gcrypt", "ipsec-mb");
    assertTrue(providers.contains(aead.get("small")), aead.toString());
    assertTrue(providers.contains(aead.get("bulk")), aead.toString());
    assertEquals(
        aead.get("small").equals(aead.get("bulk")),
        aead.get("bulkFrom") == null,
        "a single plan has no bulk size: " + aead);
    assertTrue(r.out().lines().findFirst().orElseThrow().contains("AEAD " + aead.get("small")));
    assertTrue(r.out().contains("### AEAD bound: " + aead.get("provider")), r.out());
    assertFalse(((List<Object>) aead.get("rateCheck")).isEmpty(), aead.toString());
    Map<String, Object> config = (Map<String, Object>) root.get("config");
    for (String k :
        List.of("sizes", "durationMs", "warmupMs", "transports", "provider", "depth", "verify")) {
      assertTrue(config.containsKey(k), "config." + k);
    }
    assertEquals(List.of(64.0, 4096.0), config.get("sizes"));
    List<Object> results = (List<Object>) root.get("results");
    assertEquals(Transports.REGISTRY.size() * 2, results.size());
    for (Object o : results) {
      Map<String, Object> m = (Map<String, Object>) o;
      assertEquals(Report.RESULT_FIELDS, List.copyOf(m.keySet()), "fields of " + m);
      String transport = (String) m.get("transport");
      if ("unavailable".equals(m.get("status"))) {
        assertNotNull(m.get("reason"), transport);
        continue;
      }
      assertEquals("ok", m.get("status"), transport + ": " + m.get("reason"));
      for (String k : Report.RESULT_FIELDS) {
        if (!k.equals("reason") && (Report.sealed(transport) || !Report.AEAD_FIELDS.contains(k))) {
          assertNotNull(m.get(k), transport + "." + k);
        }
      }
      if (Report.sealed(transport)) {
        double eff = (Double) m.get("efficiencyVsAeadBound");
        assertEquals(
            (Double) m.get("deliveredMBps")
                / Math.min((Double) m.get("aeadSealMBps"), (Double) m.get("aeadOpenMBps")),
            eff,
            1e-9);
        Double bulkFrom = (Double) aead.get("bulkFrom");
        boolean bulk = bulkFrom != null && (Double) m.get("messageSize") >= bulkFrom;
        assertEquals(aead.get(bulk ? "bulk" : "small"), m.get("aeadProvider"), m.toString());
      }
      assertEquals(m.get("messagesSent"), m.get("messagesDelivered"), transport);
      assertInstanceOf(Double.class, m.get("deliveredMBps"));
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void shouldKeepTheSameBytesInFlightByDefaultAndSayTheDepthOfEachSize() throws Exception {
    Path json = dir.resolve("auto.json");
    Run r =
        bench(
            "--sizes",
            "64,4KiB",
            "--transports",
            "plain-write,sealed",
            "--duration",
            "200ms",
            "--warmup",
            "0",
            "--verify",
            "--progress",
            "none",
            "--json",
            json.toString());
    assertEquals(0, r.exit(), r.out() + r.err());
    String headline = r.out().lines().findFirst().orElseThrow();
    assertTrue(headline.contains("depth auto (256 at 64 B, 64 at 4 KiB)"), headline);
    Map<String, Object> root = (Map<String, Object>) MiniJson.parse(Files.readString(json));
    Map<String, Object> config = (Map<String, Object>) root.get("config");
    assertEquals("auto", config.get("depth"));
    assertEquals(Map.of("64", 256.0, "4096", 64.0), config.get("depthBySize"));
    for (Object o : (List<Object>) root.get("results")) {
      Map<String, Object> m = (Map<String, Object>) o;
      assertEquals("ok", m.get("status"), m.toString());
      assertEquals(m.get("messagesSent"), m.get("messagesDelivered"), m.toString());
    }
  }

  @Test
  void shouldRefuseAnUnknownAeadBeforeMeasuringAnything() {
    Run r =
        bench("--aead", "fastest", "--sizes", "64", "--duration", "100ms", "--progress", "none");
    assertEquals(1, r.exit(), r.out() + r.err());
    assertTrue(
        r.err().contains("bench: --aead=fastest is not one of auto, jdk, accp, openssl, gcrypt"),
        r.err());
    assertFalse(r.out().contains("### 64 B messages"), r.out());
  }

  @Test
  @SuppressWarnings("unchecked")
  void shouldRunRoundsAndSummariseThem() throws Exception {
    Path json = dir.resolve("rounds.json");
    Run r =
        bench(
            "--transports", "tls-jdk,plain-write",
            "--sizes", "4KiB",
            "--duration", "200ms",
            "--warmup", "0",
            "--rounds", "2",
            "--progress", "none",
            "--json", json.toString());
    assertEquals(0, r.exit(), r.out() + r.err());
    for (String s :
        List.of(
            "## Round 1 of 2", "## Round 2 of 2", "## Summary of 2 rounds", "| tls-jdk | 2 |")) {
      assertTrue(r.out().contains(s), s + " in\n" + r.out());
    }
    Map<String, Object> root = (Map<String, Object>) MiniJson.parse(Files.readString(json));
    assertEquals(2.0, ((Map<String, Object>) root.get("config")).get("rounds"));
    List<Object> results = (List<Object>) root.get("results");
    assertEquals(4, results.size());
    assertEquals(
        List.of(1.0, 1.0, 2.0, 2.0),
        results.stream().map(o -> ((Map<String, Object>) o).get("round")).toList());
    List<Object> summary = (List<Object>) root.get("summary");
    assertEquals(2, summary.size());
    Map<String, Object> tls = (Map<String, Object>) summary.get(0);
    assertEquals("tls-jdk", tls.get("transport"));
    assertEquals(2.0, tls.get("roundsMeasured"));
    assertEquals(1.0, tls.get("mbpsVsTlsJdkMedian"));
    double median = (Double) tls.get("deliveredMBpsMedian");
    assertTrue(
        (Double) tls.get("deliveredMBpsMin") <= median
            && median <= (Double) tls.get("deliveredMBpsMax"),
        tls.toString());
  }

  @Test
  @SuppressWarnings("unchecked")
  void shouldCoalesceAndSayItInTheHeadlineAndJson() throws Exception {
    Path json = dir.resolve("coalesced.json");
    Run r =
        bench(
            "--sizes",
            "64",
            "--duration",
            "200ms",
            "--warmup",
            "0",
            "--depth",
            "64",
            "--coalesce",
            "16",
            "--verify",
            "--progress",
            "none",
            "--json",
            json.toString());
    assertEquals(0, r.exit(), r.out() + r.err());
    String headline = r.out().lines().findFirst().orElseThrow();
    assertTrue(headline.contains("coalescing up to 16 messages per unit"), headline);
    // the sealed bound is taken at the record size sealed: 16 x 64 B
    assertTrue(r.out().contains("| 64 B | 1 KiB |"), r.out());
    Map<String, Object> root = (Map<String, Object>) MiniJson.parse(Files.readString(json));
    assertEquals(16.0, ((Map<String, Object>) root.get("config")).get("coalesce"));
    for (Object o : (List<Object>) root.get("results")) {
      Map<String, Object> m = (Map<String, Object>) o;
      assertTrue(List.of("ok", "unavailable").contains(m.get("status")), m.toString());
      if ("ok".equals(m.get("status"))) {
        assertEquals(m.get("messagesSent"), m.get("messagesDelivered"), m.toString());
      }
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void shouldSplitTheSidesOverCpusAndSayItInTheHeadlineAndJson() throws Exception {
    assumeTrue(CpuAffinity.supported(), "CPU affinity needs 64-bit Linux");
    int[] cpus = CpuAffinity.current().toArray();
    assumeTrue(cpus.length >= 2, "needs 2 CPUs to split");
    String writer = Integer.toString(cpus[0]);
    String receiver = Integer.toString(cpus[cpus.length - 1]);
    Path json = dir.resolve("split.json");
    Run r =
        bench(
            "--sizes",
            "4KiB",
            "--duration",
            "200ms",
            "--warmup",
            "0",
            "--transports",
            "sealed,tls-jdk",
            "--writer-cpus",
            writer,
            "--receiver-cpus",
            receiver,
            "--progress",
            "none",
            "--json",
            json.toString());
    assertEquals(0, r.exit(), r.out() + r.err());
    String headline = r.out().lines().findFirst().orElseThrow();
    assertTrue(
        headline.contains("writer CPUs " + writer + ", receiver CPUs " + receiver), headline);
    Map<String, Object> root = (Map<String, Object>) MiniJson.parse(Files.readString(json));
    Map<String, Object> split =
        (Map<String, Object>) ((Map<String, Object>) root.get("config")).get("cpus");
    assertEquals(writer, split.get("writer"));
    assertEquals(receiver, split.get("receiver"));
    for (Object o : (List<Object>) root.get("results")) {
      assertEquals("ok", ((Map<String, Object>) o).get("status"), o.toString());
    }
  }

  @Test
  void shouldExplainEveryOptionInHelp() {
    Run r = bench("--help");
    assertEquals(0, r.exit());
    for (String o :
        List.of(
            "--sizes",
            "--duration",
            "--warmup",
            "--transports",
            "--provider",
            "--depth",
            "--coalesce",
            "--json",
            "--quick",
            "--verify",
            "--rounds",
            "--writer-cpus",
            "--receiver-cpus",
            "--progress")) {
      assertTrue(r.out().contains(o), o + " in\n" + r.out());
    }
    assertTrue(r.out().contains("plain-write"), r.out());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = ';',
      value = {
        "--sizes 4; --sizes",
        "--sizes 64,abc; 'abc' is not a size",
        "--sizes 128MiB; --sizes: each size must be 8 B to 64 MiB, got 128 MiB",
        "--sizes 4k; '4k' has an ambiguous or misspelt unit 'k': write 4kB (powers of 1000) or 4KiB",
        "--sizes 64,1m; write 1MB (powers of 1000) or 1MiB",
        "--sizes 20EiB; '20EiB' is too large",
        "--sizes 4GiB; '4GiB' is too large here",
        "--sizes 1.5KiB; '1.5KiB' is not a size",
        "--transports tls-jdk,nope; unknown transport 'nope'",
        "--transports plain-write,plain-write; given twice",
        "--depth 0; --depth must be 1 to 1024, got 0",
        "--depth 1025; --depth must be 1 to 1024, got 1025",
        "--depth deep; --depth must be auto or 1 to 1024, got 'deep'",
        "--coalesce 0; --coalesce must be 1 to 1024, got 0",
        "--coalesce 1025; --coalesce must be 1 to 1024",
        "--load --coalesce 8; --coalesce does not apply",
        "--rounds 0; --rounds",
        "--rounds 101; --rounds",
        "--load --rounds 2; --rounds does not apply",
        "--depth 1024 --sizes 16MiB; --depth",
        "--duration 0; --duration",
        "--duration soon; 'soon' is not a duration",
        "--warmup 2h; --warmup",
        "--quick --duration 2s; --quick",
        "--progress loud; --progress",
        "--writer-cpus x; --writer-cpus: CPU list 'x': 'x' is not a CPU number",
        "--receiver-cpus 3-1; --receiver-cpus: CPU list '3-1': range 3-1 runs backwards",
        "--receiver-cpus 1023; --receiver-cpus 1023: CPU 1023 is not one this process may run on",
        "--load --writer-cpus 0; --writer-cpus does not apply",
        "--frobnicate; --frobnicate"
      })
  void shouldRefuseBadOptionsNamingTheOption(String args, String expected) {
    Run r = bench(args.split(" "));
    assertEquals(2, r.exit(), r.err());
    assertTrue(r.err().contains(expected), "expected '" + expected + "' in: " + r.err());
    assertTrue(r.out().isEmpty(), "nothing measured: " + r.out());
  }

  @Test
  @SuppressWarnings("unchecked")
  void shouldReadDecimalAndBinarySizesAndLabelThemInTheSameGrammar() throws Exception {
    Path json = dir.resolve("sizes.json");
    Run r =
        bench(
            "--transports", "tls-jdk",
            "--sizes", "10kB,2KiB",
            "--duration", "100ms",
            "--warmup", "0",
            "--progress", "none",
            "--json", json.toString());
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("### 10 kB messages"), r.out());
    assertTrue(r.out().contains("### 2 KiB messages"), r.out());
    Map<String, Object> root = (Map<String, Object>) MiniJson.parse(Files.readString(json));
    assertEquals(List.of(10000.0, 2048.0), ((Map<String, Object>) root.get("config")).get("sizes"));
  }

  @Test
  void shouldExitThreeWhenNothingCouldBeMeasured() {
    Run r =
        bench(
            "--transports",
            "plain-write",
            "--provider",
            "no-such-provider",
            "--sizes",
            "64",
            "--quick",
            "--progress",
            "none");
    assertEquals(3, r.exit(), r.out() + r.err());
    assertTrue(r.err().contains("plain-write is unavailable here"), r.err());
    assertTrue(r.out().contains("| plain-write | unavailable: "), r.out());
  }

  @Test
  void shouldRegisterAsSubcommandOfSrdma() {
    assertTrue(SrdmaCommand.newCommandLine().getSubcommands().containsKey("bench"));
  }
}
