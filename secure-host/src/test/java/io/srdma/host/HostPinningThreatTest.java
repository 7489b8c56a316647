package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.srdma.channel.AttackProbe;
import io.srdma.channel.ChannelException;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.PolicyLoader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Attacks on the client's choice of host: another host of the same deployment, or a tenant peer
 * with a valid certificate, poses as the host the tenant means to reach, to receive its data.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostPinningThreatTest {
  @TempDir Path dir;
  private ChannelRig rig;

  @BeforeEach
  void start() throws Exception {
    rig = new ChannelRig(dir);
  }

  @AfterEach
  void stop() {
    rig.close();
  }

  @Test
  void shouldRefuseAnotherHostOfTheDeploymentBeforeSendingAnything() throws Exception {
    try (AuditLog log = AuditLog.open(dir.resolve("impostor-audit.jsonl"));
        RegionHost impostor =
            RegionHost.start(
                new HostOptions()
                    .credential(rig.ca.issueHost("host-2", Duration.ofDays(1)))
                    .trust(rig.ca.trust())
                    .policy(new PolicyLoader().loadSample())
                    .audit(new AuditTrail(log))
                    .provider(ChannelRig.PROVIDER))) {
      // the tenant wants host-1, but the address leads to host-2
      ChannelException e =
          assertThrows(
              ChannelException.class,
              () ->
                  SecureRdmaClient.connect(
                      rig.options("acme", "trainer-1").host(impostor.address())));
      assertEquals(ChannelException.Reason.AUTHENTICATION_FAILED, e.reason());
      assertEquals(KeyExchangeException.Reason.UNEXPECTED_PEER.name(), e.detail(), e.getMessage());
      assertEquals(0, impostor.stats().sessions(), "the impostor got no session");
      // host-1 itself is still reachable with the same options
      rig.track(SecureRdmaClient.connect(rig.options("acme", "trainer-1")));
    }
  }

  @Test
  void shouldRefuseATenantCertificateActingAsHostPinnedOrNot() throws Exception {
    MutualTls fake = MutualTls.server(rig.credential("globex", "evil"), rig.ca.trust());
    BlockingQueue<Object> seen = new LinkedBlockingQueue<>();
    try (SSLServerSocket listener =
        fake.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4)) {
      Thread t =
          new Thread(
              () -> {
                for (int i = 0; i < 2; i++) {
                  try (SSLSocket s = (SSLSocket) listener.accept()) {
                    seen.add(fake.handshake(s, Duration.ofSeconds(5)));
                  } catch (Exception ex) {
                    seen.add(ex);
                  }
                }
              },
              "fake-host");
      t.setDaemon(true);
      t.start();
      InetSocketAddress at =
          new InetSocketAddress(InetAddress.getLoopbackAddress(), listener.getLocalPort());
      for (ClientOptions o :
          new ClientOptions[] {
            rig.options("acme", "trainer-1").host(at),
            rig.options("acme", "trainer-2").host(at).hostIdentity(null).anyHostForDevelopment()
          }) {
        ChannelException e =
            assertThrows(ChannelException.class, () -> SecureRdmaClient.connect(o));
        assertEquals(ChannelException.Reason.AUTHENTICATION_FAILED, e.reason());
        assertEquals(KeyExchangeException.Reason.WRONG_USAGE.name(), e.detail(), e.getMessage());
        Object outcome = seen.poll(10, TimeUnit.SECONDS);
        assertTrue(outcome instanceof Exception, "the fake host authenticated nobody: " + outcome);
      }
      t.join(5_000);
    }
  }

  @Test
  void shouldBindTheSessionToTheExporterExactlyWhenBothEndsHaveIt() {
    // both ends run in this JVM: Java 25 binds to the TLS exporter, Java 17 to the transcript;
    // key confirmation passing proves both ends chose the same
    SecureRdmaClient c = rig.client("acme", "trainer-1");
    assertEquals(
        io.srdma.keys.TlsBinding.exporterAvailable()
            ? io.srdma.keys.TlsBinding.Kind.EXPORTER
            : io.srdma.keys.TlsBinding.Kind.CERTIFICATE_TRANSCRIPT,
        AttackProbe.bindingKind(c));
  }

  @Test
  void shouldRequireAPinnedHostOrTheExplicitDevelopmentOptOut() {
    ChannelException missing =
        assertThrows(
            ChannelException.class,
            () -> SecureRdmaClient.connect(rig.options("acme", "t").hostIdentity(null)));
    assertEquals(ChannelException.Reason.INVALID_ARGUMENT, missing.reason());
    assertTrue(missing.getMessage().contains("hostIdentity is required"), missing.getMessage());
    ChannelException tenant =
        assertThrows(
            ChannelException.class,
            () ->
                SecureRdmaClient.connect(
                    rig.options("acme", "t").hostIdentity(PeerIdentity.of("acme", "host-1"))));
    assertEquals(ChannelException.Reason.INVALID_ARGUMENT, tenant.reason());
    ChannelException both =
        assertThrows(
            ChannelException.class,
            () -> SecureRdmaClient.connect(rig.options("acme", "t").anyHostForDevelopment()));
    assertEquals(ChannelException.Reason.INVALID_ARGUMENT, both.reason());
  }

  @Test
  void shouldWarnOnEveryConnectWithoutPinning() {
    Logger logger = (Logger) LoggerFactory.getLogger(SecureRdmaClient.class);
    ListAppender<ILoggingEvent> events = new ListAppender<>();
    events.start();
    logger.addAppender(events);
    try {
      for (int i = 0; i < 2; i++) {
        try (SecureRdmaClient c =
            SecureRdmaClient.connect(
                rig.options("acme", "trainer-" + i).hostIdentity(null).anyHostForDevelopment())) {
          assertTrue(c.toString() != null);
        }
      }
      long warnings =
          events.list.stream()
              .filter(ev -> ev.getLevel() == Level.WARN)
              .filter(ev -> ev.getFormattedMessage().contains("WITHOUT host pinning"))
              .count();
      assertEquals(2, warnings, "one warning per connect");
    } finally {
      logger.detachAppender(events);
    }
  }
}
