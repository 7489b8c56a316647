package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.keys.Pem;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code srdma cert issue --dns ... --ip ...}: every name and address as a typed SAN. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CertIssueSanTest {
  @TempDir Path tmp;
  private Path ca;
  private Path out;

  @BeforeEach
  void createCa() {
    ca = tmp.resolve("ca");
    out = tmp.resolve("out");
    assertEquals(0, CliRun.of("ca", "init", "--dir", ca.toString()).exit());
  }

  private CliRun issue(String... names) {
    List<String> args =
        new ArrayList<>(List.of("cert", "issue", "--ca", ca.toString(), "--out", out.toString()));
    args.addAll(List.of(names));
    return CliRun.of(args.toArray(String[]::new));
  }

  @Test
  void shouldPutEveryDnsNameAndIpv4AndIpv6AddressInTheCertificateWithItsType() throws Exception {
    CliRun r =
        issue(
            "--dns", "console.example.org",
            "--dns", "LocalHost",
            "--ip", "127.0.0.1",
            "--ip", "::1");
    assertEquals(0, r.exit(), r.err());
    assertTrue(
        r.out()
            .contains(
                "issued console certificate for console.example.org, localhost, 127.0.0.1, ::1"),
        r.out());
    X509Certificate cert = Pem.readCertificate(out.resolve("console.example.org.crt"));
    assertTrue(Files.isRegularFile(out.resolve("console.example.org.key")));
    // 2 = dNSName, 7 = iPAddress
    assertEquals(
        List.of(
            List.of(2, "console.example.org"),
            List.of(2, "localhost"),
            List.of(7, "127.0.0.1"),
            List.of(7, "0:0:0:0:0:0:0:1")),
        List.copyOf(cert.getSubjectAlternativeNames()));
    assertEquals(List.of("1.3.6.1.5.5.7.3.1"), cert.getExtendedKeyUsage());

    CliRun shown = CliRun.of("cert", "show", out.resolve("console.example.org.crt").toString());
    assertTrue(
        shown.out().contains("host DNS:console.example.org, DNS:localhost, IP:127.0.0.1, IP:::1"),
        shown.out());
  }

  @Test
  void shouldTellHostValuesApartByFormAndNameFilesWithoutColons() throws Exception {
    CliRun r = issue("--host", "::1", "--host", "10.0.0.7,[2001:db8::7]");
    assertEquals(0, r.exit(), r.err());
    X509Certificate cert = Pem.readCertificate(out.resolve("__1.crt"));
    assertEquals(
        List.of(
            List.of(7, "0:0:0:0:0:0:0:1"),
            List.of(7, "10.0.0.7"),
            List.of(7, "2001:db8:0:0:0:0:0:7")),
        List.copyOf(cert.getSubjectAlternativeNames()));
  }

  @Test
  void shouldRefuseABadNameOrAddressInOneLineWithExitTwoBeforeWritingAnything() {
    String[][] cases = {
      {"--ip", "example.org", "--ip: not an IPv4 or IPv6 address: \"example.org\""},
      {"--ip", "fe80::1%eth0", "--ip: an IPv6 address is up to eight groups"},
      {"--ip", "1::2::3", "--ip: an IPv6 address"},
      {"--ip", "300.1.1.1", "--ip: an IPv4 address has four numbers 0 to 255"},
      {"--ip", "::", "--ip: :: is no address a client connects to"},
      {"--dns", "::1", "--dns: \"::1\" is an IP address, not a DNS name"},
      {"--dns", "a_b.example", "--dns: host must be a DNS name"},
      {"--host", "../evil", "--host: host must be a DNS name"}
    };
    for (String[] c : cases) {
      CliRun r = issue("--dns", "ok.example", c[0], c[1]);
      assertEquals(2, r.exit(), c[1] + ": " + r.err());
      assertTrue(r.err().contains(c[2]), c[1] + ": " + r.err());
      assertEquals(1, r.err().strip().lines().count(), r.err());
      assertFalse(r.err().contains("Exception"), r.err());
      assertFalse(Files.exists(out), "nothing written for " + c[1]);
    }
  }

  @Test
  void shouldSayInOneLineWhoTheCertificateIsForWhenThatIsUnclear() {
    String[][] cases = {
      {"say who the certificate is for: --tenant T --peer P"},
      {"not both", "--tenant", "acme", "--peer", "a", "--dns", "x.example"},
      {"--tenant needs --peer", "--tenant", "acme"},
      {"--peer needs --tenant", "--peer", "a"}
    };
    for (String[] c : cases) {
      CliRun r = issue(java.util.Arrays.copyOfRange(c, 1, c.length));
      assertEquals(2, r.exit(), String.join(" ", c) + ": " + r.err());
      assertTrue(r.err().contains(c[0]), r.err());
      assertEquals(1, r.err().strip().lines().count(), r.err());
      assertFalse(r.err().contains("(specify one of these)"), r.err());
      assertFalse(Files.exists(out), "nothing written");
    }
  }

  @Test
  void shouldBeValidatedByAJavaTlsClientConnectingToTheIpv6Loopback() throws Exception {
    assumeTrue(ipv6Loopback(), "no IPv6 loopback (::1) on this machine");
    assertEquals(0, issue("--dns", "localhost", "--ip", "127.0.0.1", "--ip", "::1").exit());
    handshake(out.resolve("localhost.crt"), out.resolve("localhost.key"));

    // the same check refuses a certificate without ::1: the test can fail
    Path other = tmp.resolve("other");
    CliRun v4only =
        CliRun.of(
            "cert",
            "issue",
            "--ca",
            ca.toString(),
            "--dns",
            "localhost",
            "--ip",
            "127.0.0.1",
            "--out",
            other.toString());
    assertEquals(0, v4only.exit(), v4only.err());
    SSLHandshakeException e =
        assertThrows(
            SSLHandshakeException.class,
            () -> handshake(other.resolve("localhost.crt"), other.resolve("localhost.key")));
    assertTrue(String.valueOf(e.getMessage()).contains("subject alternative names"), e.toString());
  }

  /** A TLS server on [::1] with the certificate; a client checking it as HTTPS does. */
  private void handshake(Path crt, Path key) throws Exception {
    X509Certificate caCert = Pem.readCertificate(ca.resolve("ca.crt"));
    X509Certificate cert = Pem.readCertificate(crt);
    PrivateKey privateKey = Pem.readPrivateKey(key, null);
    char[] pass = "test".toCharArray();
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    ks.setKeyEntry("console", privateKey, pass, new Certificate[] {cert, caCert});
    KeyManagerFactory kmf = KeyManagerFactory.getInstance("PKIX");
    kmf.init(ks, pass);
    SSLContext server = SSLContext.getInstance("TLSv1.3");
    server.init(kmf.getKeyManagers(), null, null);
    KeyStore ts = KeyStore.getInstance("PKCS12");
    ts.load(null, null);
    ts.setCertificateEntry("ca", caCert);
    TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
    tmf.init(ts);
    SSLContext client = SSLContext.getInstance("TLSv1.3");
    client.init(null, tmf.getTrustManagers(), null);

    InetAddress loopback = InetAddress.getByName("::1");
    try (SSLServerSocket listener =
        (SSLServerSocket) server.getServerSocketFactory().createServerSocket(0, 1, loopback)) {
      listener.setSoTimeout(10_000);
      Thread acceptor =
          new Thread(
              () -> {
                try (SSLSocket s = (SSLSocket) listener.accept()) {
                  s.setSoTimeout(10_000);
                  s.startHandshake();
                  s.getOutputStream().write(1);
                  s.getOutputStream().flush();
                } catch (IOException expectedWhenTheClientRefuses) {
                  // the client's verdict is what the test reads
                }
              },
              "cert-san-test-acceptor");
      acceptor.setDaemon(true);
      acceptor.start();
      try (java.net.Socket plain = new java.net.Socket()) {
        plain.connect(new InetSocketAddress(loopback, listener.getLocalPort()), 10_000);
        plain.setSoTimeout(10_000);
        // the host as a user types it in https://[::1]:port/: an IPv6 literal, never resolved
        SSLSocket s =
            (SSLSocket)
                client.getSocketFactory().createSocket(plain, "::1", listener.getLocalPort(), true);
        SSLParameters p = s.getSSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS");
        s.setSSLParameters(p);
        s.startHandshake();
        assertEquals(1, s.getInputStream().read());
      } finally {
        acceptor.join(10_000);
      }
    }
  }

  private static boolean ipv6Loopback() {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, InetAddress.getByName("::1"))) {
      return s.getLocalPort() > 0;
    } catch (IOException e) {
      return false;
    }
  }
}
