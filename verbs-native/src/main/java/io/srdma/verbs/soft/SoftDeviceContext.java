package io.srdma.verbs.soft;

import io.srdma.verbs.CompletionProgress;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.Device;
import io.srdma.verbs.DeviceAttributes;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.internal.KeyTable;
import io.srdma.verbs.internal.LiveChildren;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Objects;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An open soft device: a software RNIC. It owns the key tables, a responder listening on TCP
 * (loopback by default) whose connections are served by a fixed pool of {@link ResponderLoop}
 * selector threads (each multiplexing many connections, so threads do not grow with queue pairs),
 * and a timer thread that enforces the transport timeout of every QP. Threads per context: one
 * acceptor, one timer and {@link #RESPONDER_THREADS} responder loops, whatever the number of QPs,
 * and one {@link WriteWaiter} from the first time a requester's socket is full.
 */
final class SoftDeviceContext implements DeviceContext {
  static final String PROTECTION_DOMAIN = "protection domain";
  static final String COMPLETION_QUEUE = "completion queue";
  static final long MAX_MESSAGE_SIZE = 1L << 30;
  static final int MAX_QP_WR = 16 * 1024;
  static final int MAX_SGE = 16;
  static final int MAX_CQE = 1 << 20;
  private static final Logger LOG = LoggerFactory.getLogger(SoftDeviceContext.class);
  private static final long WATCHDOG_PERIOD_MS = 50;

  /**
   * Connections still owing their HELLO; beyond this, the oldest of them is dropped for each new
   * one (flood guard): idle connections from anyone must not lock real peers out, whose HELLO
   * follows their connect at once.
   */
  static final int MAX_PENDING_HANDSHAKES = 128;

  /** Responder selector threads per device context: half the cores, 1 to 4. */
  static final int RESPONDER_THREADS =
      Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors() / 2));

  private final SoftDevice device;
  private final DeviceOptions options;
  private final SecureRandom random = new SecureRandom();
  private final KeyTable<Object> lkeys = new KeyTable<>(random, 0xFFFFFFFF);
  private final KeyTable<Object> rkeys = new KeyTable<>(random, 0xFFFFFFFF);
  private final KeyTable<SoftQueuePair> qps = new KeyTable<>(random, 0xFFFFFF);
  private final Set<SoftQueuePair> liveQps = ConcurrentHashMap.newKeySet();
  private final Set<Responder> responders = ConcurrentHashMap.newKeySet();
  private static final long ACCEPT_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  private final AtomicInteger pendingHandshakes = new AtomicInteger();
  // the responders that still owe their handshake, oldest first
  private final Queue<Responder> handshaking = new ConcurrentLinkedQueue<>();
  private final AtomicLong refusedConnections = new AtomicLong();
  private final AtomicLong malformedConnections = new AtomicLong();
  private final AtomicLong acceptFailures = new AtomicLong();
  private final LiveChildren children = new LiveChildren();
  private final ServerSocketChannel server;
  private final byte[] localAddress;
  private final Thread acceptor;
  private final ResponderLoop[] loops;
  private int nextLoop;
  private final ScheduledExecutorService timer;
  private final String tag;
  private final Object writeWaiterLock = new Object();
  private WriteWaiter writeWaiter; // opened by the first requester whose socket is full
  private volatile boolean closed;

  SoftDeviceContext(SoftDevice device, DeviceOptions options) {
    this.device = device;
    this.options = options.conclude();
    try {
      server = ServerSocketChannel.open();
      server.bind(
          new InetSocketAddress(InetAddress.getByName(options.bindAddress()), options.bindPort()));
    } catch (IOException e) {
      throw new VerbsException(
          VerbsException.Reason.IO,
          "open_device",
          "soft responder cannot listen on "
              + options.bindAddress()
              + ":"
              + options.bindPort()
              + ": "
              + e.getMessage(),
          e);
    }
    InetSocketAddress bound;
    try {
      bound = (InetSocketAddress) server.getLocalAddress();
    } catch (IOException e) {
      closeServer();
      throw new VerbsException(
          VerbsException.Reason.IO, "open_device", "cannot read the responder address", e);
    }
    localAddress = encodeAddress(bound);
    tag = device.name() + "-" + bound.getPort();
    timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "srdma-soft-timer-" + tag);
              t.setDaemon(true);
              return t;
            });
    ScheduledFuture<?> unused =
        timer.scheduleAtFixedRate(
            this::watchdog, WATCHDOG_PERIOD_MS, WATCHDOG_PERIOD_MS, TimeUnit.MILLISECONDS);
    loops = new ResponderLoop[RESPONDER_THREADS];
    try {
      for (int i = 0; i < loops.length; i++) {
        loops[i] = new ResponderLoop("srdma-soft-resp-" + tag + "-" + i, options.responderCpus());
      }
    } catch (IOException e) {
      for (ResponderLoop loop : loops) {
        if (loop != null) {
          loop.shutdown();
        }
      }
      timer.shutdownNow();
      closeServer();
      throw new VerbsException(
          VerbsException.Reason.IO, "open_device", "cannot open a responder selector", e);
    }
    try {
      for (ResponderLoop loop : loops) {
        loop.start();
      }
    } catch (RuntimeException e) {
      for (ResponderLoop loop : loops) {
        loop.shutdown(); // started or not: stops it and closes its selector
      }
      timer.shutdownNow();
      closeServer();
      throw e;
    }
    acceptor = new Thread(this::acceptLoop, "srdma-soft-accept-" + tag);
    acceptor.setDaemon(true);
    acceptor.start();
    LOG.debug("soft device {} responder listening on {}", device.name(), bound);
  }

  DeviceOptions options() {
    return options;
  }

  KeyTable<Object> lkeys() {
    return lkeys;
  }

  KeyTable<Object> rkeys() {
    return rkeys;
  }

  KeyTable<SoftQueuePair> qps() {
    return qps;
  }

  LiveChildren children() {
    return children;
  }

  byte[] localAddress() {
    return localAddress.clone();
  }

  /** The responder's socket address. */
  InetSocketAddress responderAddress() {
    return decodeAddress(localAddress, "query");
  }

  /** A random, page-aligned, non-zero base address for a new region (no layout is revealed). */
  long randomAddress() {
    return (0x0000_1000_0000_0000L | (random.nextLong() & 0x0000_0FFF_FFFF_F000L));
  }

  int randomPsn() {
    return random.nextInt() & 0xFFFFFF;
  }

  ScheduledFuture<?> schedule(Runnable task, Duration delay) {
    return timer.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * The context's shared wait for full sockets, started on first need (a context whose requesters
   * never fill their socket, such as a host's, which only answers, has no such thread).
   */
  WriteWaiter writeWaiter() throws IOException {
    synchronized (writeWaiterLock) {
      if (closed) {
        throw new ClosedChannelException();
      }
      if (writeWaiter == null) {
        WriteWaiter w = new WriteWaiter("srdma-soft-wwait-" + tag);
        w.start();
        writeWaiter = w;
      }
      return writeWaiter;
    }
  }

  void register(SoftQueuePair qp) {
    liveQps.add(qp);
  }

  void unregister(SoftQueuePair qp) {
    liveQps.remove(qp);
  }

  /** A responder finished its HELLO, successfully or not, or was evicted. */
  void handshakeDone(Responder r) {
    handshaking.remove(r);
    pendingHandshakes.decrementAndGet();
  }

  /** Evicts the oldest responder that still owes its handshake; false if none does. */
  private boolean evictOldestHandshake() {
    Responder r;
    while ((r = handshaking.poll()) != null) {
      if (r.evict()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Times its responders were driven early because a receive they waited for was posted (any
   * thread; tests).
   */
  long responderPokes() {
    long n = 0;
    for (ResponderLoop loop : loops) {
      n += loop.pokes();
    }
    return n;
  }

  /**
   * Counts a connection dropped for a malformed frame; true for the first and every 1000th, which
   * are logged at WARN (a hostile peer must not flood the log by reconnecting).
   */
  boolean malformedConnection() {
    return malformedConnections.getAndIncrement() % 1000 == 0;
  }

  long malformedConnections() {
    return malformedConnections.get();
  }

  /** Connections dropped unheard (the oldest pending) because too many handshakes were pending. */
  long refusedConnections() {
    return refusedConnections.get();
  }

  void forget(Responder r) {
    responders.remove(r);
  }

  SoftCompletionQueue ownCq(CompletionQueue cq, String verb) {
    if (!(cq instanceof SoftCompletionQueue soft) || soft.softContext() != this) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "completion queue belongs to another device");
    }
    if (((SoftCompletionQueue) cq).isClosed()) {
      throw new VerbsException(VerbsException.Reason.CLOSED, verb, "completion queue is closed");
    }
    return (SoftCompletionQueue) cq;
  }

  private void watchdog() {
    long now = System.nanoTime();
    long timeout = options.transportTimeout().toNanos();
    for (SoftQueuePair qp : liveQps) {
      try {
        qp.checkProgress(now, timeout);
      } catch (RuntimeException e) {
        LOG.error("watchdog failed on {}", qp, e);
      }
    }
  }

  private void acceptLoop() {
    while (!closed) {
      SocketChannel ch;
      try {
        ch = server.accept();
      } catch (ClosedChannelException e) {
        return;
      } catch (IOException e) {
        if (!closed) {
          // e.g. out of descriptors: log the first and every 1000th, and pause instead of spinning
          if (acceptFailures.getAndIncrement() % 1000 == 0) {
            LOG.warn(
                "soft device {}: accept failed ({} so far): {}",
                device.name(),
                acceptFailures.get(),
                e.toString());
          }
          LockSupport.parkNanos(ACCEPT_RETRY_NANOS);
        }
        continue;
      }
      if (pendingHandshakes.incrementAndGet() > MAX_PENDING_HANDSHAKES) {
        // The oldest pending connection goes, not this one: a flood must now outpace a real
        // peer's HELLO (one round trip) instead of merely holding idle sockets.
        boolean evicted = evictOldestHandshake();
        if (refusedConnections.getAndIncrement() % 1000 == 0) {
          LOG.warn(
              "soft device {}: more than {} connections without HELLO; dropping the oldest ({} so"
                  + " far)",
              device.name(),
              MAX_PENDING_HANDSHAKES,
              refusedConnections.get());
        }
        if (!evicted) {
          pendingHandshakes.decrementAndGet();
          Requester.closeQuietly(ch);
          continue;
        }
      }
      try {
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ResponderLoop loop = loops[nextLoop];
        nextLoop = (nextLoop + 1) % loops.length;
        Responder r = new Responder(this, ch, loop);
        responders.add(r);
        handshaking.add(r);
        if (closed) {
          r.close();
          return;
        }
        loop.adopt(r);
      } catch (IOException e) {
        pendingHandshakes.decrementAndGet();
        Requester.closeQuietly(ch);
      }
    }
  }

  @Override
  public Device device() {
    return device;
  }

  @Override
  public DeviceAttributes queryDevice() {
    return new DeviceAttributes(
        MAX_MESSAGE_SIZE,
        1 << 20,
        1 << 24,
        1 << 24,
        MAX_QP_WR,
        MAX_SGE,
        MAX_CQE,
        true,
        true,
        false);
  }

  @Override
  public synchronized ProtectionDomain allocateProtectionDomain() {
    requireOpen("alloc_pd");
    SoftProtectionDomain pd = new SoftProtectionDomain(this);
    children.add(PROTECTION_DOMAIN);
    return pd;
  }

  @Override
  public CompletionQueue createCompletionQueue(int capacity) {
    return createCompletionQueue(capacity, CompletionProgress.DEVICE);
  }

  /**
   * {@inheritDoc}
   *
   * <p>{@link CompletionProgress#POLLER}: the queue opens its selector now (one descriptor) and its
   * pollers place the requests of the queue pairs whose receive queue it is ({@link
   * SoftCompletionQueue}).
   *
   * @throws VerbsException IO when a POLLER queue's selector cannot be opened
   */
  @Override
  public synchronized CompletionQueue createCompletionQueue(
      int capacity, CompletionProgress progress) {
    requireOpen("create_cq");
    Objects.requireNonNull(progress, "progress");
    if (capacity < 1 || capacity > MAX_CQE) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT, "create_cq", "capacity must be 1.." + MAX_CQE);
    }
    // built first: a CQ whose construction fails (no descriptor left) is no child to wait for
    SoftCompletionQueue cq = new SoftCompletionQueue(this, capacity, progress);
    children.add(COMPLETION_QUEUE);
    return cq;
  }

  private void requireOpen(String verb) {
    if (closed) {
      throw new VerbsException(VerbsException.Reason.CLOSED, verb, "device context is closed");
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    children.requireNone("close_device", "device context");
    closed = true;
    closeServer();
    for (Responder r : responders) {
      r.close();
    }
    timer.shutdownNow();
    try {
      acceptor.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (ResponderLoop loop : loops) {
      loop.shutdown();
    }
    WriteWaiter w;
    synchronized (writeWaiterLock) {
      w = writeWaiter;
    }
    if (w != null) {
      w.shutdown();
    }
  }

  private void closeServer() {
    try {
      server.close();
    } catch (IOException e) {
      LOG.debug("closing responder socket: {}", e.toString());
    }
  }

  static byte[] encodeAddress(InetSocketAddress a) {
    byte[] ip = a.getAddress().getAddress();
    return ByteBuffer.allocate(ip.length + 2).put(ip).putShort((short) a.getPort()).array();
  }

  static InetSocketAddress decodeAddress(byte[] address, String verb) {
    if (address.length != 6 && address.length != 18) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "not a soft provider address (" + address.length + " bytes)");
    }
    try {
      ByteBuffer b = ByteBuffer.wrap(address);
      byte[] ip = new byte[address.length - 2];
      b.get(ip);
      return new InetSocketAddress(InetAddress.getByAddress(ip), b.getShort() & 0xFFFF);
    } catch (UnknownHostException e) {
      throw new VerbsException(VerbsException.Reason.INVALID_ARGUMENT, verb, "bad address", e);
    }
  }
}
