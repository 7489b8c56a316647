package io.srdma.host;

import static io.srdma.host.HostileCertificates.concat;
import static io.srdma.host.HostileCertificates.extension;
import static io.srdma.host.HostileCertificates.extensionWith;
import static io.srdma.host.HostileCertificates.name;
import static io.srdma.host.HostileCertificates.nested;
import static io.srdma.host.HostileCertificates.tlv;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.transport.TlsConnection;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Client certificates built to hurt the parser, presented to a real host before anything is
 * authenticated: the host parses them (the JDK's X.509 parser in the TLS engine's delegated task,
 * then {@code DeploymentTrust}) on its workers. For each the property is "no input breaks the
 * host": the handshake is refused at once and counted against the sender's address (so the
 * failed-authentication limit applies), nothing waits for a deadline, no thread dies with an error,
 * and the next honest tenant is served.
 *
 * <p>A certificate nesting constructed OCTET STRINGs about 8,000 deep in one extension value fits
 * the JDK's own 32 KiB handshake-message limit and overflowed the stack of the worker that parsed
 * it: the worker died, the connection sat until its deadline and, its delegated task never done,
 * was taken for the host's slowness and not counted against the address. Bytes before the handshake
 * finished are now bounded ({@link TlsConnection#MAX_HANDSHAKE_BYTES}), which refuses it unparsed.
 * The other cases are refused by the JDK or by our trust today: they stay as guards.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostileClientCertificateTest {
  private static final InetAddress ATTACKER = loopback(2);

  /** Largest certificate the JDK's default 32 KiB handshake-message limit lets through. */
  private static final int JDK_FITS = 32_700;

  @TempDir Path dir;
  private ChannelRig rig;
  private HostileCertificates evil;
  private final List<Throwable> uncaught = new CopyOnWriteArrayList<>();
  private Thread.UncaughtExceptionHandler previousHandler;

  @BeforeEach
  void watchThreads() throws Exception {
    evil = new HostileCertificates();
    previousHandler = Thread.getDefaultUncaughtExceptionHandler();
    Thread.setDefaultUncaughtExceptionHandler((t, e) -> uncaught.add(e));
  }

  @AfterEach
  void stop() {
    Thread.setDefaultUncaughtExceptionHandler(previousHandler);
    if (rig != null) {
      rig.close();
    }
  }

  private void start(Consumer<HostOptions> tune) throws Exception {
    rig = new ChannelRig(dir, tune);
  }

  private static InetAddress loopback(int last) {
    try {
      return InetAddress.getByAddress(new byte[] {127, 0, 0, (byte) last});
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A chain of the hostile cases, built from the attacker's key. */
  @FunctionalInterface
  interface Build {
    List<byte[]> chain(HostileCertificates evil) throws Exception;
  }

  /** Room left under the bound for the rest of the client's handshake (about 800 bytes). */
  private static final int UNDER_BOUND = TlsConnection.MAX_HANDSHAKE_BYTES - 1_500;

  private static final String TOO_LARGE = "HANDSHAKE_TOO_LARGE";

  static Stream<Arguments> hostileChains() {
    return Stream.of(
        Arguments.of(
            "constructed OCTET STRINGs nested about 8,000 deep (the JDK's stack overflowed)",
            TOO_LARGE,
            (Build) e -> List.of(deep(e, JDK_FITS))),
        Arguments.of(
            "constructed OCTET STRINGs nested as deep as the bound lets through",
            "UNTRUSTED_ISSUER",
            (Build) e -> List.of(deep(e, UNDER_BOUND))),
        Arguments.of(
            "an unknown extension of SEQUENCEs nested as deep as the bound lets through",
            "UNTRUSTED_ISSUER",
            (Build)
                e ->
                    List.of(
                        fill(
                            d ->
                                e.certificate(
                                    name("evil"),
                                    name("evil"),
                                    List.of(
                                        extensionWith(
                                            "1.2.3.4", nested(0x30, new byte[] {5, 0}, d)))),
                            UNDER_BOUND))),
        Arguments.of(
            "a subject CN of constructed UTF8Strings nested as deep as the bound lets through",
            "UNTRUSTED_ISSUER",
            (Build)
                e ->
                    List.of(
                        fill(
                            d ->
                                e.certificate(
                                    name("evil"),
                                    name(nested(0x2c, tlv(0x0c, new byte[] {'x'}), d)),
                                    List.of()),
                            UNDER_BOUND))),
        Arguments.of(
            "a SAN directoryName of SEQUENCEs nested as deep as the bound lets through",
            null, // the JDK refuses the SAN, or our trust the issuer
            (Build)
                e ->
                    List.of(
                        fill(
                            d ->
                                e.certificate(
                                    name("evil"),
                                    name("evil"),
                                    List.of(
                                        extensionWith(
                                            "2.5.29.17",
                                            tlv(
                                                0x30,
                                                tlv(0xa4, nested(0x30, new byte[] {5, 0}, d)))))),
                            UNDER_BOUND))),
        Arguments.of(
            "900 extensions",
            "UNTRUSTED_ISSUER",
            (Build)
                e -> {
                  List<byte[]> exts = new ArrayList<>();
                  for (int i = 0; i < 900; i++) {
                    exts.add(extensionWith("1.2.3.4." + i, new byte[] {5, 0}));
                  }
                  return List.of(e.certificate(name("evil"), name("evil"), exts));
                }),
        Arguments.of(
            "a 30 KiB extension",
            TOO_LARGE,
            (Build)
                e ->
                    List.of(
                        e.certificate(
                            name("evil"),
                            name("evil"),
                            List.of(extensionWith("1.2.3.4", tlv(0x04, new byte[30_000])))))),
        Arguments.of(
            "a 100 KiB certificate",
            TOO_LARGE,
            (Build)
                e ->
                    List.of(
                        e.certificate(
                            name("evil"),
                            name("evil"),
                            List.of(extensionWith("1.2.3.4", tlv(0x04, new byte[100_000])))))),
        Arguments.of(
            "a chain of 12 certificates (the JDK takes 10)",
            "HANDSHAKE_FAILED",
            (Build)
                e ->
                    HostileCertificates.repeated(
                        e.certificate(name("evil"), name("evil"), List.of()), 12)),
        Arguments.of(
            "a chain of 60 certificates",
            TOO_LARGE,
            (Build)
                e ->
                    HostileCertificates.repeated(
                        e.certificate(name("evil"), name("evil"), List.of()), 60)),
        Arguments.of(
            "500 srdma identities in the SAN, CR/LF in the issuer",
            "UNTRUSTED_ISSUER",
            (Build)
                e -> {
                  List<byte[]> uris = new ArrayList<>();
                  for (int i = 0; i < 500; i++) {
                    uris.add(tlv(0x86, ("srdma://acme/p" + i).getBytes(StandardCharsets.US_ASCII)));
                  }
                  return List.of(
                      e.certificate(
                          name("evil\r\nsession established: srdma://acme/admin"),
                          name("evil"),
                          List.of(
                              extension(
                                  "2.5.29.17",
                                  tlv(0x04, tlv(0x30, concat(uris.toArray(new byte[0][]))))))));
                }));
  }

  /**
   * A certificate of at most {@code limit} bytes with constructed OCTET STRINGs nested in an
   * extension's value.
   */
  static byte[] deep(HostileCertificates e, int limit) throws Exception {
    return fill(
        d ->
            e.certificate(
                name("evil"),
                name("evil"),
                List.of(extension("1.2.3.4", nested(0x24, tlv(0x04, new byte[] {5, 0}), d)))),
        limit);
  }

  /** A certificate whose nesting is {@code depth} deep. */
  interface Nested {
    byte[] at(int depth) throws Exception;
  }

  /** The deepest nesting whose certificate still fits the JDK's 32 KiB message limit. */
  private static byte[] fill(Nested certificate) throws Exception {
    return fill(certificate, JDK_FITS);
  }

  /** The deepest nesting whose certificate is at most {@code limit} bytes. */
  private static byte[] fill(Nested certificate, int limit) throws Exception {
    int small = certificate.at(100).length;
    int big = certificate.at(1_100).length;
    int depth = 100 + (int) ((long) (limit - small) * 1_000 / (big - small));
    byte[] c = certificate.at(depth);
    while (c.length > limit) {
      depth -= 10;
      c = certificate.at(depth);
    }
    return c;
  }

  private String audit() {
    try {
      return rig.audit();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private void tenantIsServed() throws Exception {
    long before = rig.host.stats().recordsOpened();
    SecureRdmaClient c = rig.client("acme", "trainer-1");
    RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofSeconds(30));
    g.writeBlocking(0, ChannelRig.bytes(100, 1));
    ChannelRig.await(() -> rig.host.stats().recordsOpened() == before + 1, "tenant served");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("hostileChains")
  void shouldRefuseAHostileCertificateAtOnceAndServeTheNextTenant(
      String what, String reason, Build build) throws Exception {
    start(o -> {});
    List<byte[]> chain = build.chain(evil);
    String ended =
        evil.present(
            ATTACKER,
            rig.host.address(),
            chain,
            (int) ChannelRig.scaled(Duration.ofSeconds(20)).toMillis());
    assertNotEquals("timeout", ended, what + ": the host answered");
    ChannelRig.await(
        () -> rig.host.stats().authFailures() == 1,
        what + ": refused and counted against the address, not left to a deadline");
    assertEquals(0, rig.host.stats().handshakeDeadlines(), what + ": no deadline needed");
    assertTrue(uncaught.isEmpty(), what + ": no thread died: " + uncaught);
    ChannelRig.await(() -> audit().contains("from 127.0.0.2"), what + ": audited");
    if (reason != null) {
      assertTrue(
          audit().contains("\"reason\":\"" + reason + " from 127.0.0.2\""),
          what + ": refused as " + reason + ": " + audit());
    }
    assertTrue(
        !rig.audit().contains("session established: srdma://acme/admin"),
        "the issuer's CR/LF did not reach the audit log as a line");
    tenantIsServed();
    assertTrue(uncaught.isEmpty(), what + ": no thread died: " + uncaught);
  }

  @Test
  void shouldBlockAnAddressThatKeepsSendingDeepCertificates() throws Exception {
    start(o -> o.authFailuresPerMinute(3));
    byte[] deep = deep(evil, JDK_FITS);
    int timeout = (int) ChannelRig.scaled(Duration.ofSeconds(20)).toMillis();
    for (int i = 0; i < 3; i++) {
      evil.present(ATTACKER, rig.host.address(), List.of(deep), timeout);
      int failures = i + 1;
      ChannelRig.await(
          () -> rig.host.stats().authFailures() == failures, "counted against the address");
    }
    long refused = rig.host.stats().rateLimited();
    evil.present(ATTACKER, rig.host.address(), List.of(deep), timeout);
    ChannelRig.await(
        () -> rig.host.stats().rateLimited() == refused + 1, "the sender is refused at accept");
    assertEquals(3, rig.host.stats().authFailures(), "the fourth was not parsed");
    assertTrue(uncaught.isEmpty(), "no thread died: " + uncaught);
    tenantIsServed();
  }
}
