package io.srdma.bench.transport;

import io.srdma.keys.AuthenticatedPeer;
import io.srdma.keys.MutualTls;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.HdrHistogram.Histogram;

/**
 * {@code tls-jdk}: one TLS 1.3 connection on loopback through the JDK's {@code SSLSocket}, set up
 * by the project's {@link MutualTls} (mutual authentication with a dev CA). The sender writes each
 * message with one {@code write} call (with {@code --coalesce N}, throughput runs write up to N
 * messages, at most 64 KiB, with one call: the JDK seals one TLS record per 16 KiB of it); the
 * receiver reads into a 64 KiB array and delivers a message when all its bytes are decrypted. Write
 * completion = {@code write} returned (the bytes are encrypted and in the kernel's socket buffer).
 */
final class JdkTlsTransport implements BenchTransport {
  static final String NAME = "tls-jdk";
  private static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(30);
  private static final int READ_CHUNK = 64 * 1024;

  private final DevPki pki;
  private SSLSocket senderSocket;
  private SSLSocket receiverSocket;
  private OutputStream senderOut;
  private InputStream senderIn;
  private OutputStream receiverOut;
  private InputStream receiverIn;
  private final byte[] readChunk = new byte[READ_CHUNK];
  private final ByteBuffer readView = ByteBuffer.wrap(readChunk);
  private final int coalesce;
  private final CpuSplit cpus;
  private byte[] message;
  private byte[] unit; // coalesce messages end to end, for throughput runs that coalesce
  private int perUnit;
  private int size;
  private volatile long deliveredAtNanos;

  JdkTlsTransport(DevPki pki, int coalesce) {
    this(pki, coalesce, CpuSplit.NONE);
  }

  JdkTlsTransport(DevPki pki, int coalesce, CpuSplit cpus) {
    this.pki = pki;
    this.coalesce = coalesce;
    this.cpus = cpus;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void prepare(int messageSize) throws Exception {
    if (senderSocket == null) {
      connect();
    }
    size = messageSize;
    message = new byte[messageSize];
    Payload.fill(message);
    perUnit = Payload.coalesced(coalesce, messageSize);
    unit = null;
    if (perUnit > 1) {
      unit = new byte[perUnit * messageSize];
      for (int k = 0; k < perUnit; k++) {
        System.arraycopy(message, 0, unit, k * messageSize, messageSize);
      }
    }
  }

  private void connect() throws Exception {
    MutualTls server = pki.serverTls();
    MutualTls client = pki.clientTls();
    try (SSLServerSocket listener =
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1)) {
      CompletableFuture<AuthenticatedPeer> accepted =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return server.handshake((SSLSocket) listener.accept(), HANDSHAKE_TIMEOUT);
                } catch (IOException e) {
                  throw new IllegalStateException("accept failed", e);
                }
              });
      AuthenticatedPeer toReceiver =
          client.connect((InetSocketAddress) listener.getLocalSocketAddress(), HANDSHAKE_TIMEOUT);
      senderSocket = toReceiver.socket();
      receiverSocket = accepted.get(HANDSHAKE_TIMEOUT.toSeconds(), TimeUnit.SECONDS).socket();
    }
    senderOut = senderSocket.getOutputStream();
    senderIn = senderSocket.getInputStream();
    receiverOut = receiverSocket.getOutputStream();
    receiverIn = receiverSocket.getInputStream();
  }

  @Override
  public Optional<String> negotiated() {
    SSLSocket s = senderSocket;
    return s == null
        ? Optional.empty()
        : Optional.of(s.getSession().getProtocol() + " " + s.getSession().getCipherSuite());
  }

  @Override
  public ThroughputResult throughput(RunSpec spec) throws Exception {
    return run(spec, null);
  }

  @Override
  public ThroughputResult latency(RunSpec spec, Histogram oneWayNanos) throws Exception {
    return run(spec, oneWayNanos);
  }

  private ThroughputResult run(RunSpec spec, Histogram latency) throws Exception {
    boolean ack = latency != null;
    Payload.StreamReceiver receiver = new Payload.StreamReceiver(size, spec.verify());
    CompletableFuture<Void> received =
        ReceiverThread.start(
            "srdma-bench-tls-jdk-receiver", cpus, () -> receive(receiver, ack), this::closeQuietly);
    CRC32C crc = new CRC32C();
    long start = System.nanoTime();
    long sent = 0;
    long lastWrite = start;
    try {
      while (!ack && unit != null && !spec.stop(start, sent) && !received.isDone()) {
        int n = (int) Math.min(perUnit, spec.allowed(start, sent));
        if (n == 0) {
          break;
        }
        for (int k = 0; k < n; k++) {
          Payload.stamp(unit, k * size, sent + k);
        }
        if (spec.verify()) {
          crc.update(unit, 0, n * size);
        }
        senderOut.write(unit, 0, n * size);
        lastWrite = System.nanoTime();
        sent += n;
      }
      while (!spec.stop(start, sent) && !received.isDone()) {
        Payload.stamp(message, sent);
        if (spec.verify()) {
          crc.update(message, 0, size);
        }
        long t0 = System.nanoTime();
        senderOut.write(message, 0, size);
        lastWrite = System.nanoTime();
        sent++;
        if (ack) {
          if (senderIn.read() < 0) {
            throw new IOException("the receiver closed the connection");
          }
          latency.recordValue(Math.max(0, deliveredAtNanos - t0));
        }
      }
      Payload.stamp(message, Payload.END);
      senderOut.write(message, 0, size);
      senderOut.flush();
    } catch (IOException e) {
      throw ReceiverThread.failureOr(received, e);
    }
    ReceiverThread.await(received, spec.drainDeadline(), "the tls-jdk receiver");
    return new ThroughputResult(
        size,
        sent,
        receiver.delivered(),
        receiver.lastDeliveredNanos() - start,
        sent,
        lastWrite - start,
        receiver.sequenceErrors(),
        spec.verify() ? crc.getValue() : 0,
        receiver.checksum());
  }

  private void receive(Payload.StreamReceiver receiver, boolean ack) throws IOException {
    while (!receiver.ended()) {
      int n = receiverIn.read(readChunk);
      if (n < 0) {
        throw new IOException("sender closed the connection");
      }
      readView.clear().limit(n);
      if (receiver.consume(readView) > 0 && ack) {
        deliveredAtNanos = receiver.lastDeliveredNanos();
        receiverOut.write(1);
      }
    }
  }

  private void closeQuietly() {
    try {
      close();
    } catch (UncheckedIOException e) {
      // the receiver's failure is what gets reported
    }
  }

  @Override
  public void close() {
    try {
      try {
        if (senderSocket != null) {
          senderSocket.close();
        }
      } finally {
        if (receiverSocket != null) {
          receiverSocket.close();
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("closing the tls-jdk sockets failed", e);
    }
  }
}
