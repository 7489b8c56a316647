package io.srdma.bench.keys;

import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * What turning TLS session resumption off costs (docs/keys.md): the bare JDK mutual TLS 1.3
 * handshake with session tickets (every connection after the first resumes, PSK with (EC)DHE)
 * against the same handshake with tickets off, as {@code MutualTls} configures it (a full handshake
 * every time). Interleaved round by round; prints medians and the ratio.
 *
 * <pre>java -cp bench/target/benchmarks.jar io.srdma.bench.keys.ResumptionCost [ROUNDS]</pre>
 */
public final class ResumptionCost {
  private ResumptionCost() {}

  /** Runs 200 warm-up rounds, then ROUNDS (default 1000) measured rounds. */
  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    Path dir = Files.createTempDirectory("srdma-bench-resumption");
    try {
      DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
      Credential server = ca.issueHost("bench-server", Duration.ofDays(1));
      Credential client = ca.issuePeer(PeerIdentity.of("bench", "client"), Duration.ofDays(1));
      long[][] samples = new long[2][rounds];
      String[] names = {"resumed (tickets on)", "full (tickets off, as MutualTls)"};
      try (Endpoint resuming = new Endpoint(server, client, ca, true);
          Endpoint full = new Endpoint(server, client, ca, false)) {
        Endpoint[] variants = {resuming, full};
        for (int r = -200; r < rounds; r++) {
          for (int k = 0; k < 2; k++) {
            int v = Math.floorMod(r + k, 2);
            long t0 = System.nanoTime();
            boolean resumed = variants[v].connect();
            long t = System.nanoTime() - t0;
            if (r >= 0) {
              samples[v][r] = t;
              if (resumed != (v == 0)) {
                throw new IllegalStateException(names[v] + ": resumed=" + resumed);
              }
            }
          }
        }
      }
      double base = 0;
      System.out.printf(
          Locale.ROOT,
          "%-34s %10s %10s %10s %8s%n",
          "variant",
          "p50 us",
          "p10 us",
          "p90 us",
          "ratio");
      for (int v = 0; v < 2; v++) {
        long[] s = samples[v];
        Arrays.sort(s);
        double p50 = s[s.length / 2] / 1000.0;
        if (v == 0) {
          base = p50;
        }
        System.out.printf(
            Locale.ROOT,
            "%-34s %10.1f %10.1f %10.1f %8.2f%n",
            names[v],
            p50,
            s[s.length / 10] / 1000.0,
            s[s.length * 9 / 10] / 1000.0,
            p50 / base);
      }
    } finally {
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** Counts the server certificate checks of a client: one per full handshake. */
  private static final class Counting extends X509ExtendedTrustManager {
    private final X509ExtendedTrustManager delegate;
    private final AtomicInteger checks;

    Counting(X509ExtendedTrustManager delegate, AtomicInteger checks) {
      this.delegate = delegate;
      this.checks = checks;
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      delegate.checkClientTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      checks.incrementAndGet();
      delegate.checkServerTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      delegate.checkClientTrusted(chain, authType, socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      checks.incrementAndGet();
      delegate.checkServerTrusted(chain, authType, socket);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      delegate.checkClientTrusted(chain, authType, engine);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      checks.incrementAndGet();
      delegate.checkServerTrusted(chain, authType, engine);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return delegate.getAcceptedIssuers();
    }
  }

  /** A JDK server and client context pair, with or without session tickets. */
  private static final class Endpoint implements AutoCloseable {
    private final AtomicInteger checks = new AtomicInteger();
    private final SSLContext clientContext;
    private final SSLServerSocket listener;
    private final Thread thread;

    Endpoint(Credential server, Credential client, DeploymentCa ca, boolean tickets)
        throws Exception {
      SSLContext serverContext = context(server, ca, tickets, null);
      clientContext = context(client, ca, tickets, checks);
      listener = (SSLServerSocket) serverContext.getServerSocketFactory().createServerSocket();
      listener.setNeedClientAuth(true);
      listener.setEnabledProtocols(new String[] {"TLSv1.3"});
      listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
      thread =
          new Thread(
              () -> {
                while (!listener.isClosed()) {
                  try (SSLSocket s = (SSLSocket) listener.accept()) {
                    s.setTcpNoDelay(true); // the ticket and the byte: no Nagle wait between them
                    s.startHandshake();
                    s.getOutputStream().write(1);
                    s.getOutputStream().flush();
                    s.getInputStream().read(); // the client's close
                  } catch (IOException e) {
                    // the client went away or the listener closed
                  }
                }
              },
              "bench-resumption-" + (tickets ? "on" : "off"));
      thread.setDaemon(true);
      thread.start();
    }

    private static SSLContext context(
        Credential own, DeploymentCa ca, boolean tickets, AtomicInteger checks) throws Exception {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      ks.setKeyEntry(
          "own",
          own.privateKey(),
          new char[0],
          new Certificate[] {own.certificate(), ca.certificate()});
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      trust.setCertificateEntry("ca", ca.certificate());
      KeyManagerFactory kmf = KeyManagerFactory.getInstance("SunX509");
      kmf.init(ks, new char[0]);
      TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
      tmf.init(trust);
      SSLContext ctx = SSLContext.getInstance("TLSv1.3", "SunJSSE");
      X509ExtendedTrustManager pkix = (X509ExtendedTrustManager) tmf.getTrustManagers()[0];
      ctx.init(
          kmf.getKeyManagers(),
          new TrustManager[] {checks == null ? pkix : new Counting(pkix, checks)},
          new SecureRandom());
      if (!tickets) {
        // MutualTls's setting: a lifetime above the 7-day ticket limit, so no tickets
        ctx.getServerSessionContext().setSessionTimeout(7 * 24 * 3600 + 1);
        ctx.getClientSessionContext().setSessionTimeout(7 * 24 * 3600 + 1);
      }
      return ctx;
    }

    /** One connection; whether it resumed (no certificate exchanged in this handshake). */
    boolean connect() throws IOException {
      // by host name and port: the JDK client looks its cached session up by them
      try (SSLSocket s =
          (SSLSocket)
              clientContext.getSocketFactory().createSocket("localhost", listener.getLocalPort())) {
        s.setEnabledProtocols(new String[] {"TLSv1.3"});
        s.setTcpNoDelay(true);
        s.setSoTimeout(10_000);
        s.startHandshake();
        if (s.getInputStream().read() != 1) {
          throw new IOException("server did not accept the connection");
        }
        // a full handshake has the client check the server's certificate; a resumed one does not
        return checks.getAndSet(0) == 0;
      }
    }

    @Override
    public void close() throws Exception {
      listener.close();
      thread.join(5_000);
    }
  }
}
