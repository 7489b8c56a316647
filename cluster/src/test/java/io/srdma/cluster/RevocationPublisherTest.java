package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.etcd.jetcd.ByteSequence;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.PolicyLoader;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509CRL;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.stream.Collectors;
import org.bouncycastle.asn1.x509.CRLNumber;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.cert.jcajce.JcaX509CRLConverter;
import org.bouncycastle.cert.jcajce.JcaX509v2CRLBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * {@code cert revoke --cluster}: only a list the deployment CA signed counts in etcd. A value under
 * the CRL key that is not one (junk, or a forgery with a huge CRL number, written by anyone who can
 * write the key) is overwritten instead of blocking every later revocation; a CA-signed newer list
 * still refuses an older one.
 */
@Timeout(120)
class RevocationPublisherTest {
  private static final String PREFIX = "/srdma/crl";
  private static final Duration ONE_SECOND = Duration.ofSeconds(1);

  @TempDir Path dir;
  private EtcdTestCluster etcd;
  private EtcdLink console;
  private TestHost host;
  private DeploymentCa ca;
  private ListAppender<ILoggingEvent> warnings;
  private Logger logger;

  @BeforeEach
  void start() throws Exception {
    etcd = EtcdTestCluster.start(dir.resolve("etcd"));
    ca = etcd.ca();
    console = EtcdLink.open(etcd.clientConfig(PREFIX, null));
    Path crlFile = dir.resolve("h1-crl.pem");
    Files.writeString(crlFile, "");
    host =
        new TestHost(
            "h1",
            etcd.clientConfig(PREFIX, "h1"),
            new PolicyLoader().parse("sample", sample()),
            ca,
            crlFile);
    Await.until(
        Duration.ofSeconds(10),
        "h1 connected",
        () -> host.node.state() == ClusterNode.State.CONNECTED);
    logger = (Logger) LoggerFactory.getLogger(RevocationPublisher.class);
    warnings = new ListAppender<>();
    warnings.start();
    logger.addAppender(warnings);
  }

  @AfterEach
  void stop() {
    if (logger != null) {
      logger.detachAppender(warnings);
    }
    if (host != null) {
      host.close();
    }
    if (console != null) {
      console.close();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  @Test
  void junkUnderTheCrlKeyIsOverwrittenAndTheHostsGetTheRealList() throws Exception {
    // whoever can write the key (any host without etcd RBAC) puts bytes that are no CRL there
    hold("junk\u001b[2J\n".getBytes(StandardCharsets.ISO_8859_1));

    Credential peer = revokeAndPublish("trainer-1");

    assertArrayEquals(Crls.encode(ca.crl()), held(), "etcd holds the CA's list");
    String logged = logged();
    assertTrue(logged.contains("not an X.509 CRL"), logged);
    assertFalse(
        logged.contains("junk") || logged.contains("\u001b"), "raw bytes logged: " + logged);
    assertTrue(host.refuses(peer.certificate()));
  }

  @Test
  void aForgedListWithAHugeNumberIsOverwritten() throws Exception {
    // the deployment CA's name, a key that is not the CA's, a number no honest list will reach
    hold(Crls.encode(forged(BigInteger.TWO.pow(160))));

    Credential peer = revokeAndPublish("trainer-2");

    assertArrayEquals(Crls.encode(ca.crl()), held(), "etcd holds the CA's list");
    String logged = logged();
    assertTrue(logged.contains("signature does not verify"), logged);
    assertTrue(logged.contains("(161 bits)"), logged);
    assertTrue(host.refuses(peer.certificate()));

    // and a forged list is never published by the console itself
    ClusterException e =
        assertThrows(
            ClusterException.class,
            () -> RevocationPublisher.publish(console, forged(BigInteger.TEN), List.of(), cert()));
    assertEquals(ClusterException.Reason.REFUSED, e.reason());
    assertArrayEquals(Crls.encode(ca.crl()), held());
  }

  @Test
  void aCaSignedNewerListStillRefusesAnOlderOne() throws Exception {
    Credential first = ca.issuePeer(PeerIdentity.of("acme", "trainer-3"), Duration.ofDays(1));
    assertTrue(ca.revoke(first.certificate().getSerialNumber()));
    X509CRL older = ca.crl();
    Credential second = revokeAndPublish("trainer-4");
    byte[] newer = held();

    ClusterException e =
        assertThrows(
            ClusterException.class,
            () ->
                RevocationPublisher.publish(
                    console, older, List.of(first.certificate().getSerialNumber()), cert()));
    assertEquals(ClusterException.Reason.REFUSED, e.reason());
    assertArrayEquals(newer, held(), "nothing was written");
    assertTrue(host.refuses(second.certificate()));

    // the same list again: unchanged, nothing written
    assertFalse(RevocationPublisher.publish(console, ca.crl(), List.of(), cert()).changed());
    assertTrue(logged().isEmpty(), logged());
  }

  private static String sample() throws Exception {
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private java.security.cert.X509Certificate cert() {
    return ca.certificate();
  }

  private Credential revokeAndPublish(String name) {
    Credential peer = ca.issuePeer(PeerIdentity.of("acme", name), Duration.ofDays(1));
    assertFalse(host.refuses(peer.certificate()));
    BigInteger serial = peer.certificate().getSerialNumber();
    assertTrue(ca.revoke(serial));
    assertTrue(RevocationPublisher.publish(console, ca.crl(), List.of(serial), cert()).changed());
    Await.until(ONE_SECOND, name + " refused by the host", () -> host.refuses(peer.certificate()));
    return peer;
  }

  private void hold(byte[] value) throws Exception {
    console.client().getKVClient().put(console.keys().crl(), ByteSequence.from(value)).get();
  }

  private byte[] held() throws Exception {
    return console
        .client()
        .getKVClient()
        .get(console.keys().crl())
        .get()
        .getKvs()
        .get(0)
        .getValue()
        .getBytes();
  }

  private String logged() {
    return warnings.list.stream()
        .map(ILoggingEvent::getFormattedMessage)
        .collect(Collectors.joining("\n"));
  }

  /** A CRL in the deployment CA's name, signed by a key that is not the CA's. */
  private X509CRL forged(BigInteger number) throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"));
    KeyPair other = g.generateKeyPair();
    Instant now = Instant.now();
    JcaX509v2CRLBuilder b =
        new JcaX509v2CRLBuilder(ca.certificate().getSubjectX500Principal(), Date.from(now));
    b.setNextUpdate(Date.from(now.plus(Duration.ofDays(1))));
    b.addExtension(Extension.cRLNumber, false, new CRLNumber(number));
    return new JcaX509CRLConverter()
        .getCRL(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(other.getPrivate())));
  }
}
