package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.srdma.channel.record.AeadSelection.Choice;
import io.srdma.channel.record.AeadSelection.Mode;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The data path's AES-GCM is chosen among providers that pass the known-answer test. */
class AeadSelectionTest {
  private static final Supplier<AeadProvider> ABSENT =
      () -> {
        throw new AeadException("not on this machine (test)");
      };

  @Test
  void shouldPassTheKnownAnswerTestWithTheJdk() {
    AeadKnownAnswer.check(AeadProvider.jdk());
  }

  @Test
  void shouldRefuseAProviderThatSealsTheVectorWrong() {
    AeadException e =
        assertThrows(
            AeadException.class, () -> AeadKnownAnswer.check(FakeGcmProvider.aead("corrupt")));
    assertTrue(e.getMessage().contains("wrong ciphertext or tag"), e.getMessage());
  }

  @Test
  void shouldRefuseAProviderThatOpensWithoutCheckingTheTag() {
    AeadException e =
        assertThrows(
            AeadException.class, () -> AeadKnownAnswer.check(FakeGcmProvider.aead("unchecked")));
    assertTrue(e.getMessage().contains("flipped ciphertext bit"), e.getMessage());
  }

  @Test
  void shouldUseTheJdkInAutoWhenTheOtherCandidateFailsItsKnownAnswerTest() {
    Choice c =
        AeadSelection.choose(Mode.AUTO, AeadProvider::jdk, () -> FakeGcmProvider.aead("corrupt"));
    assertEquals(AeadProvider.JDK, c.plan().small().name());
    assertTrue(c.accpUnavailable().contains("known-answer"), c.accpUnavailable());
    assertEquals(1, c.rates().size());
  }

  @Test
  void shouldRefuseToStartWhenAForcedProviderFailsItsKnownAnswerTest() {
    AeadException e =
        assertThrows(
            AeadException.class,
            () ->
                AeadSelection.choose(
                    Mode.ACCP, AeadProvider::jdk, () -> FakeGcmProvider.aead("unchecked")));
    assertTrue(e.getMessage().startsWith("srdma.aead=accp is forced but"), e.getMessage());
    assertTrue(e.getMessage().contains("known-answer"), e.getMessage());
  }

  @Test
  void shouldRefuseToStartWhenAForcedProviderIsUnavailable() {
    AeadException e =
        assertThrows(
            AeadException.class, () -> AeadSelection.choose(Mode.ACCP, AeadProvider::jdk, ABSENT));
    assertEquals(
        "srdma.aead=accp is forced but unavailable: not on this machine (test)", e.getMessage());
  }

  @Test
  void shouldRefuseToStartWhenForcedOpensslIsUnavailable() {
    AeadException e =
        assertThrows(
            AeadException.class,
            () -> AeadSelection.choose(Mode.OPENSSL, AeadProvider::jdk, ABSENT, ABSENT));
    assertEquals(
        "srdma.aead=openssl is forced but unavailable: not on this machine (test)", e.getMessage());
    assertEquals(Mode.OPENSSL, Mode.parse(" OpenSSL ", "--aead"));
  }

  @Test
  void shouldUseForcedOpensslAndMeasureItOnNativeMemory() {
    AeadProvider openssl;
    try {
      openssl = AeadProvider.openssl();
    } catch (AeadException e) {
      abort("libcrypto is not loadable here: " + e.getMessage());
      return;
    }
    AeadKnownAnswer.check(openssl);
    assertTrue(openssl.nativeMemory());
    assertThrows(AeadException.class, openssl::newCipher, "no JCE cipher from a native provider");
    Choice c = AeadSelection.choose(Mode.OPENSSL, AeadProvider::jdk, ABSENT, () -> openssl);
    assertEquals(AeadProvider.OPENSSL, c.plan().small().name());
    assertTrue(
        c.plan().small().description().startsWith("OpenSSL "), c.plan().small().description());
    assertEquals(2, c.rates().size(), "the JDK measured beside it: " + c.summary());
    assertTrue(c.rates().get(0).at(64 * 1024).sealMBps() > 0, c.summary());
  }

  @Test
  void shouldRefuseToStartWhenForcedGcryptIsUnavailable() {
    AeadException e =
        assertThrows(
            AeadException.class,
            () -> AeadSelection.choose(Mode.GCRYPT, AeadProvider::jdk, ABSENT, ABSENT, ABSENT));
    assertEquals(
        "srdma.aead=gcrypt is forced but unavailable: not on this machine (test)", e.getMessage());
    assertEquals(Mode.GCRYPT, Mode.parse(" GCrypt ", "--aead"));
  }

  @Test
  void shouldUseForcedGcryptAndMeasureItOnNativeMemory() {
    AeadProvider gcrypt;
    try {
      gcrypt = AeadProvider.gcrypt();
    } catch (AeadException e) {
      abort("libgcrypt is not loadable here: " + e.getMessage());
      return;
    }
    AeadKnownAnswer.check(gcrypt);
    assertTrue(gcrypt.nativeMemory());
    assertThrows(AeadException.class, gcrypt::newCipher, "no JCE cipher from a native provider");
    Choice c = AeadSelection.choose(Mode.GCRYPT, AeadProvider::jdk, ABSENT, ABSENT, () -> gcrypt);
    assertEquals(AeadProvider.GCRYPT, c.plan().small().name());
    assertTrue(
        c.plan().small().description().startsWith("libgcrypt "), c.plan().small().description());
    assertEquals(2, c.rates().size(), "the JDK measured beside it: " + c.summary());
    assertTrue(c.rates().get(0).at(64 * 1024).sealMBps() > 0, c.summary());
  }

  @Test
  void shouldChooseTheFastestNativeLibraryAtASizeOnlyByTheMarginOverTheJdk() {
    List<AeadRates> r =
        List.of(rates("accp", 300, 9000), rates("gcrypt", 700, 5000), rates("jdk", 400, 4000));
    assertEquals(1, AeadAuto.fastestAt(r, 2, 2, 64), "gcrypt at 64 B");
    assertEquals(0, AeadAuto.fastestAt(r, 2, 2, 65536), "accp at 64 KiB");
    List<AeadRates> close = List.of(rates("gcrypt", 430, 4300), rates("jdk", 400, 4000));
    assertEquals(1, AeadAuto.fastestAt(close, 1, 1, 64), "under 1.10x: the JDK keeps it");
    assertEquals(1, AeadAuto.fastestAt(close, 1, 1, 65536));
    assertEquals(0, AeadAuto.fastestAt(close, 1, -1, 64), "no JDK: the fastest native");
    assertEquals(0, AeadAuto.fastestAt(List.of(rates("jdk", 1, 1)), 0, 0, 64));
    assertEquals(-1, AeadAuto.fastestAt(List.of(), 0, -1, 64));
  }

  @Test
  void shouldGiveSmallAndLargeRecordsEachTheirFastestProvider() throws Exception {
    List<AeadProvider> measured = List.of(named("accp"), named("gcrypt"), AeadProvider.jdk());
    AeadAuto.Planned p =
        plan(
            measured,
            rates("accp", 300, 4500, 9000),
            rates("gcrypt", 700, 4000, 5000),
            rates("jdk", 400, 3000, 4000));
    assertEquals("gcrypt", p.plan().small().name());
    assertEquals("accp", p.plan().bulk().name());
    assertEquals(4096, p.plan().bulkFrom(), "accp is ahead at 4 KiB too");
    assertSame(p.plan().small(), p.plan().forPayload(4095));
    assertSame(p.plan().bulk(), p.plan().forPayload(4096));
    assertEquals("gcrypt under 4 KiB, accp from 4 KiB", p.plan().label());
    assertEquals(
        List.of("gcrypt", "accp", "jdk"), p.rates().stream().map(AeadRates::provider).toList());
    assertTrue(p.why().contains("gcrypt the fastest at 64 B (1.75x the JDK's)"), p.why());
    assertTrue(p.why().contains("accp the fastest at 64 KiB (2.25x the JDK's)"), p.why());

    AeadAuto.Planned behind =
        plan(
            measured,
            rates("accp", 300, 3500, 9000),
            rates("gcrypt", 700, 4000, 5000),
            rates("jdk", 400, 3000, 4000));
    assertEquals(65536, behind.plan().bulkFrom(), "gcrypt keeps 4 KiB, where it measured faster");
    assertSame(behind.plan().small(), behind.plan().forPayload(65535));
    assertTrue(
        behind.why().matches(".*; accp against gcrypt: 0\\.8\\dx at 4 KiB, 0\\.8\\dx at 16 KiB"),
        behind.why());

    AeadAuto.Planned crossing =
        plan(
            measured,
            rates("accp", 300, 3500, 6000, 9000),
            rates("gcrypt", 700, 4000, 4500, 5000),
            rates("jdk", 400, 3000, 3500, 4000));
    assertEquals(16384, crossing.plan().bulkFrom(), "accp from where it is ahead to the top");
    AeadAuto.Planned notContiguous =
        plan(
            measured,
            rates("accp", 300, 4500, 4400, 9000),
            rates("gcrypt", 700, 4000, 4500, 5000),
            rates("jdk", 400, 3000, 3500, 4000));
    assertEquals(65536, notContiguous.plan().bulkFrom(), "behind at 16 KiB: not from 4 KiB");

    AeadAuto.Planned one =
        plan(
            measured,
            rates("accp", 300, 3500, 4000),
            rates("gcrypt", 700, 4000, 5000),
            rates("jdk", 400, 3000, 4000));
    assertTrue(one.plan().isSingle());
    assertEquals("gcrypt", one.plan().label());
    assertEquals(Integer.MAX_VALUE, one.plan().bulkFrom());

    AeadAuto.Planned jdkLarge =
        plan(
            measured,
            rates("accp", 300, 3500, 4000),
            rates("gcrypt", 700, 4000, 4200),
            rates("jdk", 400, 3000, 4000));
    // no native 1.10x the JDK at 64 KiB, but gcrypt (in the plan for 64 B) is no slower there:
    // the JDK would have to lead it by the margin to take the large records
    assertEquals("gcrypt", jdkLarge.plan().label(), "no split for a JDK 0.95x gcrypt at 64 KiB");
    assertTrue(
        jdkLarge.why().contains("at 64 KiB jdk's rate is 0.95x its own, under the 1.10x"),
        jdkLarge.why());

    AeadAuto.Planned jdkLargeClear =
        plan(
            measured,
            rates("accp", 300, 3500, 3600),
            rates("gcrypt", 700, 3600, 3600),
            rates("jdk", 400, 3000, 4000));
    assertEquals("jdk", jdkLargeClear.plan().bulk().name(), "the JDK 1.11x gcrypt at 64 KiB");
    assertTrue(
        jdkLargeClear.why().contains("no native library at least 1.10x"), jdkLargeClear.why());
  }

  @Test
  void shouldKeepOneProviderWhereTheOtherEndsPickLeadsItByLessThanTheMargin() throws Exception {
    List<AeadProvider> measured = List.of(named("accp"), named("gcrypt"), AeadProvider.jdk());
    // session 40's start-up: the JDK a few percent from gcrypt at 64 B, gcrypt far ahead at 64 KiB
    AeadAuto.Planned jdkClose =
        plan(
            measured, rates("accp", 50, 2800), rates("gcrypt", 184, 3970), rates("jdk", 170, 2560));
    assertTrue(jdkClose.plan().isSingle(), jdkClose.plan().label());
    assertEquals("gcrypt", jdkClose.plan().label());
    assertEquals("gcrypt", jdkClose.rates().get(0).provider());
    assertTrue(
        jdkClose
            .why()
            .startsWith(
                "auto: gcrypt the fastest at 64 KiB (1.55x the JDK's), and for every size: at 64 B"
                    + " jdk's rate is 0.92x its own, under the 1.10x a split needs"),
        jdkClose.why());
    AeadAuto.Planned jdkAhead =
        plan(
            measured, rates("accp", 50, 2800), rates("gcrypt", 184, 3970), rates("jdk", 196, 2560));
    assertEquals("gcrypt", jdkAhead.plan().label(), "1.07x at 64 B is no reason to split");
    AeadAuto.Planned jdkClear =
        plan(
            measured, rates("accp", 50, 2800), rates("gcrypt", 184, 3970), rates("jdk", 210, 2560));
    assertEquals("jdk under 4 KiB, gcrypt from 4 KiB", jdkClear.plan().label(), "1.14x: split");
    // and at the large end: accp 3 % ahead of gcrypt at 64 KiB takes no records from it
    AeadAuto.Planned bulkClose =
        plan(
            measured,
            rates("accp", 300, 5150),
            rates("gcrypt", 700, 5000),
            rates("jdk", 400, 3000));
    assertEquals("gcrypt", bulkClose.plan().label());
    assertTrue(bulkClose.why().contains("at 64 KiB accp's rate is 1.03x its own"), bulkClose.why());
  }

  /** Auto's rule over ACCP and gcrypt (the native libraries, in this order) and the JDK. */
  private static AeadAuto.Planned plan(
      List<AeadProvider> measured, AeadRates accp, AeadRates gcrypt, AeadRates jdk) {
    return AeadAuto.plan(measured, List.of(accp, gcrypt, jdk), 2, 2);
  }

  private static AeadProvider named(String name) throws Exception {
    return new AeadProvider(name, AeadProvider.jdk().newCipher().getProvider(), "test " + name);
  }

  private static AeadRates rates(String provider, double small, double large) {
    return rates(provider, small, (small + large) / 2, large);
  }

  private static AeadRates rates(String provider, double small, double middle, double large) {
    return rates(provider, small, middle, middle, large);
  }

  private static AeadRates rates(
      String provider, double small, double at4k, double at16k, double large) {
    return new AeadRates(
        provider,
        List.of(
            new AeadRates.Rate(64, small, small),
            new AeadRates.Rate(4096, at4k, at4k),
            new AeadRates.Rate(16384, at16k, at16k),
            new AeadRates.Rate(65536, large, large)));
  }

  @Test
  void shouldSayWhyGcryptIsNotUsedInAuto() {
    Choice c = AeadSelection.choose(Mode.AUTO, AeadProvider::jdk, ABSENT, ABSENT, ABSENT);
    assertEquals("not on this machine (test)", c.gcryptUnavailable());
    assertTrue(c.summary().contains("gcrypt unavailable: not on this machine (test)"), c.summary());
  }

  @Test
  void shouldSayWhyEachNativeLibraryIsNotUsedInAuto() {
    Choice c = AeadSelection.choose(Mode.AUTO, AeadProvider::jdk, ABSENT, ABSENT);
    assertEquals(AeadProvider.JDK, c.plan().small().name());
    assertEquals("not on this machine (test)", c.opensslUnavailable());
    assertTrue(c.summary().contains("openssl unavailable: not on this machine"), c.summary());
  }

  @Test
  void shouldSayWhyAccpIsNotUsedInAuto() {
    Choice c = AeadSelection.choose(Mode.AUTO, AeadProvider::jdk, ABSENT);
    assertEquals(AeadProvider.JDK, c.plan().small().name());
    assertEquals("not on this machine (test)", c.accpUnavailable());
    assertTrue(c.summary().contains("accp unavailable: not on this machine"), c.summary());
  }

  @Test
  void shouldUseTheForcedJdkWithoutLoadingAnyOtherProvider() {
    Choice c = AeadSelection.choose(Mode.JDK, AeadProvider::jdk, ABSENT);
    assertEquals(AeadProvider.JDK, c.plan().small().name());
    assertNull(c.accpUnavailable());
    AeadRates.Rate r = c.rates().get(0).at(64 * 1024);
    assertTrue(r.sealMBps() > 0 && r.openMBps() > 0, c.summary());
  }

  @Test
  void shouldChooseTheFasterCandidateByTheDocumentedMargin() {
    // two JDK candidates of the same speed: whichever wins, the rule decided it
    Choice c =
        AeadSelection.choose(
            Mode.AUTO,
            AeadProvider::jdk,
            () -> new AeadProvider("accp", AeadProvider.jdk().newCipher().getProvider(), "twin"));
    assertEquals(2, c.rates().size());
    assertEquals(c.plan().small().name(), c.rates().get(0).provider());
    AeadRates accp = c.rates().stream().filter(r -> r.provider().equals("accp")).findFirst().get();
    AeadRates jdk = c.rates().stream().filter(r -> r.provider().equals("jdk")).findFirst().get();
    double m = AeadSelection.NATIVE_MARGIN;
    double small = accp.scoreAt(64) / jdk.scoreAt(64);
    double large = accp.scoreAt(65536) / jdk.scoreAt(65536);
    // each end: accp only by the margin over the JDK; two providers only where each leads the
    // other by the margin at its end, else one of them takes every size
    boolean accpSmall = small >= m;
    boolean accpLarge = large >= m;
    if (accpSmall != accpLarge) {
      if ((accpLarge ? large : 1 / large) < m) {
        accpLarge = accpSmall; // the large end's pick does not lead at 64 KiB: the 64 B pick
      } else if ((accpSmall ? small : 1 / small) < m) {
        accpSmall = accpLarge; // the small end's pick does not lead at 64 B: the 64 KiB pick
      }
    }
    assertEquals(accpSmall, c.plan().forPayload(64).name().equals("accp"), c.reason());
    assertEquals(accpLarge, c.plan().forPayload(65536).name().equals("accp"), c.reason());
    assertTrue(c.reason().startsWith("auto: "), c.reason());
  }

  @Test
  void shouldRejectAnUnknownMode() {
    AeadException e = assertThrows(AeadException.class, () -> Mode.parse("fast", "--aead"));
    assertEquals(
        "--aead=fast is not one of auto, jdk, accp, openssl, gcrypt, ipsec-mb", e.getMessage());
  }

  @Test
  void shouldParseIpsecMbWithItsHyphenAndNameItSo() {
    assertEquals(Mode.IPSEC_MB, Mode.parse("IPSEC-MB", "--aead"));
    assertEquals("ipsec-mb", Mode.IPSEC_MB.label());
    assertThrows(AeadException.class, () -> Mode.parse("ipsec_mb", "--aead"));
  }

  @Test
  void shouldSayWhyIpsecMbIsNotUsedInAuto() {
    Choice c = AeadSelection.choose(Mode.AUTO, AeadProvider::jdk, ABSENT, ABSENT, ABSENT, ABSENT);
    assertEquals("not on this machine (test)", c.ipsecMbUnavailable());
    assertTrue(c.summary().contains("ipsec-mb unavailable: not on this machine"), c.summary());
  }

  @Test
  void shouldRefuseAForcedIpsecMbThatIsUnavailableNamingWhy() {
    AeadException e =
        assertThrows(
            AeadException.class,
            () ->
                AeadSelection.choose(
                    Mode.IPSEC_MB, AeadProvider::jdk, ABSENT, ABSENT, ABSENT, ABSENT));
    assertTrue(
        e.getMessage().startsWith("srdma.aead=ipsec-mb is forced but unavailable"), e.getMessage());
  }

  @Test
  void shouldUseTheForcedIpsecMbWhereItLoads() {
    AeadProvider p;
    try {
      p = AeadProvider.ipsecMb();
    } catch (AeadException e) {
      Assumptions.abort("intel-ipsec-mb is not loadable here: " + e.getMessage());
      return;
    }
    AeadProvider loaded = p;
    Choice c =
        AeadSelection.choose(
            Mode.IPSEC_MB, AeadProvider::jdk, ABSENT, ABSENT, ABSENT, () -> loaded);
    assertEquals(AeadProvider.IPSEC_MB, c.plan().small().name());
    assertEquals(AeadProvider.IPSEC_MB, c.plan().forPayload(1 << 20).name());
    assertTrue(c.plan().small().description().contains("intel-ipsec-mb 2."), c.summary());
  }

  @Test
  void shouldLoadAccpAndPassItsKnownAnswerTestOnLinuxX8664() {
    assumeTrue(
        System.getProperty("os.name").equals("Linux")
            && System.getProperty("os.arch").equals("amd64"));
    AeadProvider accp = AeadProvider.accp();
    AeadKnownAnswer.check(accp);
    assertTrue(accp.description().startsWith("ACCP 2."), accp.description());
  }

  @Test
  void shouldLogTheProcessChoiceOnceAndKeepIt() {
    Logger logger = (Logger) LoggerFactory.getLogger(AeadSelection.class);
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    logger.addAppender(log);
    try {
      AeadSelection.forget();
      Choice first = AeadSelection.select(Mode.JDK);
      Choice again = AeadSelection.current();
      assertSame(first, again);
      assertSame(first, AeadSelection.select(Mode.JDK));
      long lines =
          log.list.stream()
              .filter(e -> e.getLevel() == Level.INFO)
              .filter(e -> e.getFormattedMessage().startsWith("data-path AEAD: jdk"))
              .count();
      assertEquals(1, lines, log.list.toString());
      AeadException e = assertThrows(AeadException.class, () -> AeadSelection.select(Mode.ACCP));
      assertTrue(e.getMessage().contains("already chosen in mode jdk"), e.getMessage());
    } finally {
      logger.detachAppender(log);
      AeadSelection.forget();
    }
  }
}
