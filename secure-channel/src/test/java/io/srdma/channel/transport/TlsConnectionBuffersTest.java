package io.srdma.channel.transport;

import static io.srdma.channel.ByteSearch.contains;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.ErrorCode;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.FrameWriter;
import io.srdma.channel.protocol.MessageType;
import io.srdma.channel.protocol.Side;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A connection holds its TLS buffers only while bytes wait in them, and gives them back zeroed: an
 * idle connection holds none, and no connection ever sees another's bytes in a buffer it takes.
 */
@Timeout(60)
class TlsConnectionBuffersTest {
  @TempDir Path dir;

  private MutualTls server;
  private MutualTls client;
  private EventLoop loop;
  private ExecutorService tasks;
  private ServerSocketChannel listener;
  private final List<TlsConnection> opened = new ArrayList<>();

  /** Both ends of one connection. */
  private record Pair(
      TlsConnection host, TlsConnection peer, ControlProxy peerOut, ControlProxy hostOut) {}

  @BeforeEach
  void setUp() throws Exception {
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    server =
        MutualTls.server(ca.issuePeer(PeerIdentity.host("host-1"), Duration.ofDays(1)), ca.trust());
    client =
        MutualTls.client(
            ca.issuePeer(PeerIdentity.of("acme", "trainer"), Duration.ofDays(1)), ca.trust());
    loop = new EventLoop("tls-buffers-test");
    loop.start();
    tasks = Executors.newFixedThreadPool(2);
    listener = ServerSocketChannel.open();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
  }

  @AfterEach
  void tearDown() throws Exception {
    for (TlsConnection c : opened) {
      c.close();
    }
    listener.close();
    loop.close();
    tasks.shutdownNow();
  }

  private Pair connect() throws Exception {
    SocketChannel c = SocketChannel.open(listener.getLocalAddress());
    SocketChannel s = listener.accept();
    c.configureBlocking(false);
    s.configureBlocking(false);
    int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
    TlsConnection host =
        new TlsConnection(
            loop, s, server.newEngine("127.0.0.1", port), Side.CLIENT, tasks, () -> {});
    TlsConnection peer =
        new TlsConnection(
            loop, c, client.newEngine("127.0.0.1", port), Side.SERVER, tasks, () -> {});
    opened.add(host);
    opened.add(peer);
    loop.execute(
        () -> {
          host.register(loop.selector());
          peer.register(loop.selector());
          peer.beginHandshake();
        });
    await(() -> host.handshakeFinished() && peer.handshakeFinished(), "TLS handshake");
    return new Pair(
        host,
        peer,
        new ControlProxy(new FrameWriter(peer.output())),
        new ControlProxy(new FrameWriter(host.output())));
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "not within 20 s: " + what);
      Thread.sleep(2);
    }
  }

  /** Buffers {@code c} holds now, counted on the loop's thread. */
  private int held(TlsConnection c) throws Exception {
    CompletableFuture<Integer> n = new CompletableFuture<>();
    loop.execute(() -> n.complete(c.heldBuffers()));
    return n.get(10, TimeUnit.SECONDS);
  }

  private static String marker(String who) {
    return ("<" + who + ">").repeat(40);
  }

  /** Sends an ERROR frame whose text is {@code text} and takes it at the host. */
  private static void exchange(Pair p, String text) throws Exception {
    p.peerOut().error(0, ErrorCode.INTERNAL_ERROR, text);
    take(p.host(), text);
  }

  /** Sends an ERROR frame whose text is {@code text} from the host and takes it at the peer. */
  private static void exchangeBack(Pair p, String text) throws Exception {
    p.hostOut().error(0, ErrorCode.INTERNAL_ERROR, text);
    take(p.peer(), text);
  }

  private static void take(TlsConnection c, String text) throws Exception {
    Frame[] got = new Frame[1];
    await(
        () -> {
          try {
            got[0] = c.nextFrame();
            return got[0] != null;
          } catch (java.io.IOException e) {
            throw new AssertionError(e);
          }
        },
        "the frame");
    assertEquals(MessageType.ERROR, got[0].type());
    assertEquals(text, got[0].error().text());
  }

  @Test
  void shouldHoldNoBuffersWhenIdle() throws Exception {
    Pair p = connect();
    exchange(p, "hello");
    await(
        () -> {
          try {
            return held(p.host()) == 0 && held(p.peer()) == 0;
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        },
        "both ends idle with no buffer");
    exchange(p, "again"); // taken again from the pool, and given back again
    await(
        () -> {
          try {
            return held(p.host()) == 0 && held(p.peer()) == 0;
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        },
        "both ends idle again");
  }

  @Test
  void shouldHoldTheBytesOfAFrameNotYetTaken() throws Exception {
    Pair p = connect();
    p.peerOut().error(0, ErrorCode.INTERNAL_ERROR, "waiting");
    await(
        () -> {
          try {
            return held(p.host()) >= 1;
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        },
        "the host's decrypted bytes held for the frame");
    Frame f = p.host().nextFrame();
    assertNotNull(f);
    assertEquals("waiting", f.error().text());
    assertEquals(0, held(p.host()));
  }

  @Test
  void shouldZeroEveryBufferGivenBack() throws Exception {
    Pair p = connect();
    String secret = marker("secret-of-A");
    for (int i = 0; i < 5; i++) {
      exchange(p, secret);
    }
    await(
        () -> {
          try {
            return held(p.host()) == 0 && held(p.peer()) == 0;
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        },
        "idle");
    int checked = 0;
    for (int size : p.host().bufferSizes()) {
      BufferPool pool = BufferPool.of(size);
      for (ByteBuffer b : pool.snapshot()) {
        byte[] a = b.array();
        for (int i = 0; i < a.length; i++) {
          if (a[i] != 0) {
            throw new AssertionError("a pooled buffer of " + size + " B has byte " + i + " set");
          }
        }
        checked++;
      }
    }
    assertTrue(checked >= 2, "pooled buffers checked: " + checked);
  }

  @Test
  void shouldNeverShowOneConnectionsBytesToAnother() throws Exception {
    Pair a = connect();
    int appSize = a.host().bufferSizes()[1];
    // only A's buffers in the pool from here on: B can take no buffer but one that A used
    BufferPool pool = BufferPool.of(appSize);
    while (pool.pooled() > 0) {
      pool.acquire();
    }
    byte[] secretA = marker("secret-of-A").getBytes(StandardCharsets.US_ASCII);
    for (int i = 0; i < 5; i++) {
      exchange(a, new String(secretA, StandardCharsets.US_ASCII));
      exchangeBack(a, new String(secretA, StandardCharsets.US_ASCII));
    }
    await(
        () -> {
          try {
            return held(a.host()) == 0 && held(a.peer()) == 0;
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        },
        "A idle");
    assertTrue(pool.pooled() > 0, "A's buffers were given back");
    long allocated = pool.allocated();
    // B takes A's former buffers from the pool: a frame of B waits, untaken, in one of them
    Pair b = connect();
    String secretB = marker("B");
    b.peerOut().error(0, ErrorCode.INTERNAL_ERROR, secretB);
    byte[][] seen = new byte[1][];
    await(
        () -> {
          seen[0] = b.host().decryptedBytes();
          return seen[0] != null && contains(seen[0], secretB.getBytes(StandardCharsets.US_ASCII));
        },
        "B's frame in B's buffer");
    assertEquals(allocated, pool.allocated(), "B's buffer is one that A used");
    // any piece of A's text (B's frame overwrote the start of whatever the buffer held)
    byte[] pieceOfA = "<secret-of-A>".getBytes(StandardCharsets.US_ASCII);
    assertFalse(contains(seen[0], pieceOfA), "A's plaintext in B's buffer");
    assertEquals(secretB, b.host().nextFrame().error().text());
  }
}
