package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.Pem;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConsoleConfigTest {
  @TempDir Path dir;

  @Test
  void shouldDefaultToLoopbackAndAnEphemeralPort() {
    ConsoleConfig c = new ConsoleConfig();
    assertEquals("127.0.0.1", c.host());
    assertEquals(0, c.port());
  }

  @Test
  void shouldRefuseToServeWithoutACertificate() {
    ConsoleException e = assertThrows(ConsoleException.class, () -> new ConsoleConfig().conclude());
    assertTrue(e.getMessage().contains("HTTPS only"), e.getMessage());
  }

  @Test
  void shouldNameTheBadSetting() throws Exception {
    Credential cert =
        DeploymentCa.init(dir.resolve("ca"), null).issueServer("localhost", Duration.ofDays(1));
    assertTrue(
        assertThrows(
                ConsoleException.class,
                () -> new ConsoleConfig().tls(cert, List.of()).port(70000).conclude())
            .getMessage()
            .contains("port"));
    assertTrue(
        assertThrows(
                ConsoleException.class,
                () ->
                    new ConsoleConfig()
                        .tls(cert, List.of())
                        .loginLimit(0, Duration.ofMinutes(1))
                        .conclude())
            .getMessage()
            .contains("loginLimit"));
    assertTrue(
        assertThrows(
                ConsoleException.class,
                () ->
                    new ConsoleConfig()
                        .tls(cert, List.of())
                        .metricsToken("short".toCharArray())
                        .conclude())
            .getMessage()
            .contains("metricsToken"));
    for (Duration bad : new Duration[] {null, Duration.ZERO, Duration.ofSeconds(-1)}) {
      assertTrue(
          assertThrows(
                  ConsoleException.class,
                  () -> new ConsoleConfig().tls(cert, List.of()).sessionLifetime(bad).conclude())
              .getMessage()
              .contains("sessionLifetime"));
    }
    assertEquals(
        ConsoleConfig.SESSION_LIFETIME_DEFAULT,
        new ConsoleConfig().tls(cert, List.of()).conclude().sessionLifetime());
    for (Duration bad :
        new Duration[] {
          null, Duration.ZERO, Duration.ofMillis(99), Duration.ofHours(1).plusNanos(1)
        }) {
      assertTrue(
          assertThrows(
                  ConsoleException.class,
                  () -> new ConsoleConfig().tls(cert, List.of()).requestReadTimeout(bad).conclude())
              .getMessage()
              .contains("requestReadTimeout"));
    }
    assertEquals(
        Duration.ofSeconds(60),
        new ConsoleConfig().tls(cert, List.of()).conclude().requestReadTimeout());
    for (Duration bad :
        new Duration[] {
          null, Duration.ZERO, Duration.ofMillis(99), Duration.ofHours(1).plusNanos(1)
        }) {
      assertTrue(
          assertThrows(
                  ConsoleException.class,
                  () ->
                      new ConsoleConfig().tls(cert, List.of()).responseWriteTimeout(bad).conclude())
              .getMessage()
              .contains("responseWriteTimeout"));
    }
    assertEquals(
        Duration.ofSeconds(60),
        new ConsoleConfig().tls(cert, List.of()).conclude().responseWriteTimeout());
    assertEquals(
        Duration.ofMillis(100),
        new ConsoleConfig()
            .tls(cert, List.of())
            .responseWriteTimeout(Duration.ofMillis(100))
            .conclude()
            .responseWriteTimeout());
    for (Duration bad :
        new Duration[] {
          null,
          Duration.ZERO,
          Duration.ofSeconds(-1),
          Duration.ofMillis(999),
          Duration.ofDays(1).plusNanos(1)
        }) {
      assertTrue(
          assertThrows(
                  ConsoleException.class,
                  () -> new ConsoleConfig().tls(cert, List.of()).exportMaxDuration(bad).conclude())
              .getMessage()
              .contains("exportMaxDuration must be from PT1S to PT24H"));
    }
    assertEquals(
        Duration.ofMinutes(10),
        new ConsoleConfig().tls(cert, List.of()).conclude().exportMaxDuration());
    for (Duration good : new Duration[] {Duration.ofSeconds(1), Duration.ofDays(1)}) {
      assertEquals(
          good,
          new ConsoleConfig()
              .tls(cert, List.of())
              .exportMaxDuration(good)
              .conclude()
              .exportMaxDuration());
    }
  }

  @Test
  void shouldReadAnOperatorsPemKeyAndChain() throws Exception {
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    Credential cert = ca.issueServer("console.example", Duration.ofDays(1));
    Path chain = dir.resolve("console-chain.pem");
    Files.writeString(
        chain,
        Pem.toPem(cert.certificate()) + Pem.toPem(ca.certificate()),
        StandardCharsets.US_ASCII);
    Path key = dir.resolve("console.key");
    Pem.writePrivateKey(key, cert.privateKey(), "pass-phrase".toCharArray());
    ConsoleConfig c = new ConsoleConfig().pem(chain, key, "pass-phrase".toCharArray()).conclude();
    assertEquals(cert.certificate(), c.credential().certificate());
    assertEquals(List.of(ca.certificate()), c.chain());
    assertEquals(2, c.certificates().size());
  }

  @Test
  void shouldNotShowTheMetricsTokenInToString() throws Exception {
    String token = "a-long-metrics-token-0123456789abcdef";
    ConsoleConfig c = new ConsoleConfig().metricsToken(token.toCharArray());
    assertFalse(c.toString().contains(token));
    assertTrue(c.toString().contains("metricsToken=set"));
  }
}
