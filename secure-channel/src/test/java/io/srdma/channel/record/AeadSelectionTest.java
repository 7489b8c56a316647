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
    assertEquals(AeadProvider.JDK, c.provider().name());
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
    assertEquals(AeadProvider.OPENSSL, c.provider().name());
    assertTrue(c.provider().description().startsWith("OpenSSL "), c.provider().description());
    assertEquals(2, c.rates().size(), "the JDK measured beside it: " + c.summary());
    assertTrue(c.chosenRates().at(64 * 1024).sealMBps() > 0, c.summary());
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
    assertEquals(AeadProvider.GCRYPT, c.provider().name());
    assertTrue(c.provider().description().startsWith("libgcrypt "), c.provider().description());
    assertEquals(2, c.rates().size(), "the JDK measured beside it: " + c.summary());
    assertTrue(c.chosenRates().at(64 * 1024).sealMBps() > 0, c.summary());
  }

  @Test
  void shouldCompareNativeMemoryLibrariesAsMeasured() {
    assertEquals( // openssl and gcrypt both work on native memory: no margin between them
        1, AeadSelection.preferredNative(List.of(bulk("openssl", 1000), bulk("gcrypt", 1010)), 2));
    assertEquals(
        0, AeadSelection.preferredNative(List.of(bulk("openssl", 1010), bulk("gcrypt", 1000)), 2));
    assertEquals( // ACCP must lead the faster of them by the margin
        2,
        AeadSelection.preferredNative(
            List.of(bulk("accp", 1300), bulk("openssl", 1000), bulk("gcrypt", 1200)), 3));
    assertEquals(
        0,
        AeadSelection.preferredNative(
            List.of(bulk("accp", 1400), bulk("openssl", 1000), bulk("gcrypt", 1200)), 3));
  }

  @Test
  void shouldSayWhyGcryptIsNotUsedInAuto() {
    Choice c = AeadSelection.choose(Mode.AUTO, AeadProvider::jdk, ABSENT, ABSENT, ABSENT);
    assertEquals("not on this machine (test)", c.gcryptUnavailable());
    assertTrue(c.summary().contains("gcrypt unavailable: not on this machine (test)"), c.summary());
  }

  @Test
  void shouldPreferOpensslAmongNativeLibrariesUnlessAnotherLeadsByTheMargin() {
    assertEquals(
        1, AeadSelection.preferredNative(List.of(bulk("accp", 1050), bulk("openssl", 1000)), 2));
    assertEquals(
        0, AeadSelection.preferredNative(List.of(bulk("accp", 1150), bulk("openssl", 1000)), 2));
    assertEquals( // the JDK's entry, past count, is not a native library
        1,
        AeadSelection.preferredNative(
            List.of(bulk("accp", 900), bulk("openssl", 1000), bulk("jdk", 5000)), 2));
    assertEquals(
        1, AeadSelection.preferredNative(List.of(bulk("openssl", 900), bulk("accp", 1000)), 2));
    assertEquals(
        0, AeadSelection.preferredNative(List.of(bulk("openssl", 900), bulk("jdk", 5000)), 1));
    assertEquals(-1, AeadSelection.preferredNative(List.of(bulk("jdk", 5000)), 0));
  }

  private static AeadRates bulk(String provider, double mbps) {
    return new AeadRates(
        provider,
        List.of(
            new AeadRates.Rate(64, 100, 100),
            new AeadRates.Rate(4096, mbps, mbps),
            new AeadRates.Rate(65536, mbps, mbps)));
  }

  @Test
  void shouldSayWhyEachNativeLibraryIsNotUsedInAuto() {
    Choice c = AeadSelection.choose(Mode.AUTO, AeadProvider::jdk, ABSENT, ABSENT);
    assertEquals(AeadProvider.JDK, c.provider().name());
    assertEquals("not on this machine (test)", c.opensslUnavailable());
    assertTrue(c.summary().contains("openssl unavailable: not on this machine"), c.summary());
  }

  @Test
  void shouldSayWhyAccpIsNotUsedInAuto() {
    Choice c = AeadSelection.choose(Mode.AUTO, AeadProvider::jdk, ABSENT);
    assertEquals(AeadProvider.JDK, c.provider().name());
    assertEquals("not on this machine (test)", c.accpUnavailable());
    assertTrue(c.summary().contains("accp unavailable: not on this machine"), c.summary());
  }

  @Test
  void shouldUseTheForcedJdkWithoutLoadingAnyOtherProvider() {
    Choice c = AeadSelection.choose(Mode.JDK, AeadProvider::jdk, ABSENT);
    assertEquals(AeadProvider.JDK, c.provider().name());
    assertNull(c.accpUnavailable());
    AeadRates.Rate r = c.chosenRates().at(64 * 1024);
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
    assertEquals(c.provider().name(), c.chosenRates().provider());
    AeadRates accp = c.rates().stream().filter(r -> r.provider().equals("accp")).findFirst().get();
    AeadRates jdk = c.rates().stream().filter(r -> r.provider().equals("jdk")).findFirst().get();
    double ratio = accp.bulkScore() / jdk.bulkScore();
    assertEquals(
        ratio >= AeadSelection.ACCP_MARGIN, c.provider().name().equals("accp"), c.reason());
    assertTrue(c.reason().startsWith("auto: accp's bulk rate"), c.reason());
  }

  @Test
  void shouldRejectAnUnknownMode() {
    AeadException e = assertThrows(AeadException.class, () -> Mode.parse("fast", "--aead"));
    assertEquals("--aead=fast is not one of auto, jdk, accp, openssl, gcrypt", e.getMessage());
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
