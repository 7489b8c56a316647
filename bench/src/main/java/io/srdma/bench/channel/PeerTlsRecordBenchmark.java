package io.srdma.bench.channel;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.srdma.bench.transport.DevPki;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The AEAD of the TLS peers {@code srdma bench} compares against, on one thread without sockets:
 * one TLS 1.3 application-data record sealed ({@code SSLEngine.wrap}) and one opened ({@code
 * unwrap}) between two in-memory engines of the same provider as {@code tls-netty} (BoringSSL,
 * netty-tcnative, {@code OPENSSL}) or {@code tls-jdk} ({@code JDK}), direct buffers, mutual TLS
 * with the bench's dev CA. Each engine negotiates its own suite (BoringSSL: AES-128-GCM on AES
 * hardware; the JDK: AES-256-GCM), printed at set-up. Set beside {@link AeadRecordBenchmark} at the
 * same size, it says how much of a large-message gap between {@code sealed} and a TLS peer is the
 * AES-GCM implementation itself (docs/performance.md, session 22).
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar PeerTlsRecordBenchmark
 * java -jar bench/target/benchmarks.jar 'AeadRecordBenchmark\.(seal|open)$' -p provider=openssl -p size=16000
 * </pre>
 *
 * A TLS record carries at most 16 KiB of plaintext (the JDK's engine takes 16,367 bytes per
 * record), so {@code size} stops at 16,000. Throughput (bytes/s) is {@code size} divided by the
 * time per operation.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
@State(Scope.Thread)
public class PeerTlsRecordBenchmark {
  /** The suite {@code tls-jdk} negotiates (the JDK's own first choice). */
  private static final String JDK_SUITE = "TLS_AES_256_GCM_SHA384";

  /** {@code OPENSSL} (BoringSSL, as {@code tls-netty}) or {@code JDK} (as {@code tls-jdk}). */
  @Param({"OPENSSL", "JDK"})
  public String provider;

  /** Plaintext bytes per record: at most 16,000, below every engine's record limit. */
  @Param({"4096", "16000"})
  public int size;

  private DevPki pki;
  private SSLEngine client;
  private SSLEngine server;
  private ByteBuffer plain;
  private ByteBuffer wire;
  private ByteBuffer opened;

  /** Both engines, their handshake done in memory. */
  @Setup(Level.Trial)
  public void setUp() throws Exception {
    pki = DevPki.create();
    SslProvider p = SslProvider.valueOf(provider);
    client = context(p, false).newEngine(ByteBufAllocator.DEFAULT);
    server = context(p, true).newEngine(ByteBufAllocator.DEFAULT);
    int net = Math.max(client.getSession().getPacketBufferSize(), size + 1024);
    plain = ByteBuffer.allocateDirect(size);
    wire = ByteBuffer.allocateDirect(net);
    opened =
        ByteBuffer.allocateDirect(64 * 1024); // engines refuse a destination below their record
    handshake(net);
    System.out.println(
        "\n"
            + provider
            + ": "
            + client.getSession().getProtocol()
            + " "
            + client.getSession().getCipherSuite());
  }

  private SslContext context(SslProvider p, boolean isServer) throws SSLException {
    SslContextBuilder b = pki.nettyContext(p, isServer);
    if (p == SslProvider.JDK) {
      b.ciphers(List.of(JDK_SUITE)); // what tls-jdk's SSLSocket negotiates with the JDK's defaults
    }
    return b.build();
  }

  private void handshake(int net) throws SSLException {
    ByteBuffer empty = ByteBuffer.allocate(0);
    ByteBuffer toServer = ByteBuffer.allocateDirect(net * 4);
    ByteBuffer toClient = ByteBuffer.allocateDirect(net * 4);
    ByteBuffer sink = ByteBuffer.allocateDirect(opened.capacity());
    client.beginHandshake();
    server.beginHandshake();
    for (int i = 0; i < 100 && !(done(client) && done(server)); i++) {
      step(client, empty, toServer, toClient, sink);
      step(server, empty, toClient, toServer, sink);
    }
    if (!done(client) || !done(server)) {
      throw new IllegalStateException(provider + ": the in-memory handshake did not finish");
    }
  }

  /**
   * Lets {@code e} send what it has into {@code out}, then read what waits for it in {@code in}.
   */
  private static void step(
      SSLEngine e, ByteBuffer empty, ByteBuffer out, ByteBuffer in, ByteBuffer sink)
      throws SSLException {
    e.wrap(empty, out);
    tasks(e);
    in.flip();
    while (in.hasRemaining()) {
      sink.clear();
      SSLEngineResult r = e.unwrap(in, sink);
      tasks(e);
      if (r.bytesConsumed() == 0) {
        break;
      }
    }
    in.compact();
  }

  private static boolean done(SSLEngine e) {
    HandshakeStatus h = e.getHandshakeStatus();
    return h == HandshakeStatus.NOT_HANDSHAKING || h == HandshakeStatus.FINISHED;
  }

  private static void tasks(SSLEngine e) {
    Runnable t;
    while ((t = e.getDelegatedTask()) != null) {
      t.run();
    }
  }

  /** Drops both engines and the dev CA. */
  @TearDown(Level.Trial)
  public void tearDown() {
    client.closeOutbound();
    pki.close();
  }

  /** One record sealed: {@code size} plaintext bytes wrapped into the wire buffer. */
  @Benchmark
  public int seal() throws SSLException {
    plain.clear();
    wire.clear();
    SSLEngineResult r = client.wrap(plain, wire);
    wire.flip();
    if (r.bytesConsumed() != size) {
      throw new IllegalStateException("wrap took " + r.bytesConsumed() + " of " + size);
    }
    return r.bytesProduced();
  }

  /**
   * One record sealed and opened: TLS's record sequence numbers refuse a replayed record, so each
   * open needs a fresh one; {@code sealAndOpen} minus {@code seal} is the unwrap.
   */
  @Benchmark
  public int sealAndOpen() throws SSLException {
    seal();
    opened.clear();
    SSLEngineResult r = server.unwrap(wire, opened);
    if (r.bytesProduced() != size) {
      throw new IllegalStateException(
          "unwrap gave " + r + " of " + size + ", left " + wire.remaining());
    }
    return r.bytesProduced();
  }
}
