package io.srdma.bench.transport;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import javax.net.ssl.SSLException;
import org.HdrHistogram.Histogram;

/**
 * {@code tls-netty}: one TLS 1.3 connection on loopback through Netty 4.2 (NIO transport) with
 * BoringSSL ({@code netty-tcnative-boringssl-static}, {@link SslProvider#OPENSSL}), mutual
 * authentication with the same dev CA and trust checks as {@code tls-jdk}. The strongest TLS peer a
 * Java application would realistically use.
 *
 * <p>Sender and receiver each run on their own event loop thread, the Netty way: the sender writes
 * while the channel is writable and flushes every {@value #BATCH} messages; the receiver delivers a
 * message when all its bytes came out of the {@link SslHandler}. Each message is written as an
 * 8-byte pooled stamp buffer plus a retained slice of a shared body (two small objects per message:
 * Netty's API has no way around that). Write completion = the write future of a batch's last
 * message completed (Netty handed the encrypted bytes to the kernel).
 *
 * <p>If BoringSSL cannot be loaded here, {@link #unavailableReason} says why; there is no fallback
 * to the JDK provider.
 */
final class NettyTlsTransport implements BenchTransport {
  static final String NAME = "tls-netty";
  private static final int BATCH = 16;
  private static final Duration SETUP_TIMEOUT = Duration.ofSeconds(30);

  private final DevPki pki;
  private EventLoopGroup senderGroup;
  private EventLoopGroup receiverGroup;
  private Channel serverChannel;
  private Channel senderChannel;
  private Channel receiverChannel;
  private final SenderHandler sender = new SenderHandler();
  private final ReceiverHandler receiver = new ReceiverHandler();
  private ByteBuf body;
  private int size;
  private final CpuSplit cpus;

  NettyTlsTransport(DevPki pki) {
    this(pki, CpuSplit.NONE);
  }

  NettyTlsTransport(DevPki pki, CpuSplit cpus) {
    this.pki = pki;
    this.cpus = cpus;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Optional<String> unavailableReason() {
    try {
      if (!OpenSsl.isAvailable()) {
        Throwable cause = OpenSsl.unavailabilityCause();
        return Optional.of(
            "BoringSSL (netty-tcnative-boringssl-static) did not load: "
                + (cause == null ? "no reason given" : cause));
      }
      if (!SslProvider.isTlsv13Supported(SslProvider.OPENSSL)) {
        return Optional.of("BoringSSL loaded (" + OpenSsl.versionString() + ") without TLS 1.3");
      }
      return Optional.empty();
    } catch (LinkageError e) {
      return Optional.of("netty-tcnative could not be loaded: " + e);
    }
  }

  @Override
  public void prepare(int messageSize) throws Exception {
    if (senderChannel == null) {
      connect();
    }
    if (body != null) {
      body.release();
    }
    size = messageSize;
    body = senderChannel.alloc().directBuffer(messageSize, messageSize);
    ByteBuffer pattern = ByteBuffer.allocate(messageSize);
    Payload.fill(pattern, 0, messageSize);
    body.writeBytes(pattern);
  }

  private SslContext context(boolean server) throws SSLException {
    return pki.nettyContext(SslProvider.OPENSSL, server).build();
  }

  private void connect() throws Exception {
    SslContext serverSsl = context(true);
    SslContext clientSsl = context(false);
    senderGroup = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    receiverGroup = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    if (cpus.receiver() != null) { // its one loop thread, before it serves anything
      try {
        receiverGroup.submit(cpus::pinReceiver).get(10, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        throw e.getCause() instanceof Exception c ? c : e;
      }
    }
    CompletableFuture<SslHandler> accepted = new CompletableFuture<>();
    serverChannel =
        new ServerBootstrap()
            .group(receiverGroup)
            .channel(NioServerSocketChannel.class)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    SslHandler ssl = serverSsl.newHandler(ch.alloc());
                    ch.pipeline().addLast(ssl, receiver);
                    accepted.complete(ssl);
                  }
                })
            .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
            .sync()
            .channel();
    InetSocketAddress address = (InetSocketAddress) serverChannel.localAddress();
    ChannelFuture connected =
        new Bootstrap()
            .group(senderGroup)
            .channel(NioSocketChannel.class)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(
                ChannelOption.WRITE_BUFFER_WATER_MARK,
                new WriteBufferWaterMark(512 * 1024, 1024 * 1024))
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ch.pipeline()
                        .addLast(
                            clientSsl.newHandler(
                                ch.alloc(), address.getHostString(), address.getPort()),
                            sender);
                  }
                })
            .connect(address);
    if (!connected.await(SETUP_TIMEOUT.toMillis()) || !connected.isSuccess()) {
      throw new IllegalStateException("tls-netty: connect failed", connected.cause());
    }
    senderChannel = connected.channel();
    senderChannel
        .pipeline()
        .get(SslHandler.class)
        .handshakeFuture()
        .get(SETUP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    SslHandler serverSide = accepted.get(SETUP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    serverSide.handshakeFuture().get(SETUP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    receiverChannel = serverSide.handshakeFuture().getNow();
  }

  @Override
  public Optional<String> negotiated() {
    Channel c = senderChannel;
    SslHandler ssl = c == null ? null : c.pipeline().get(SslHandler.class);
    if (ssl == null) {
      return Optional.empty();
    }
    javax.net.ssl.SSLSession session = ssl.engine().getSession();
    return Optional.of(session.getProtocol() + " " + session.getCipherSuite());
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
    Run r = new Run(spec, size, latency);
    receiverChannel.eventLoop().submit(() -> receiver.begin(r)).get(30, TimeUnit.SECONDS);
    senderChannel.eventLoop().execute(() -> sender.begin(r));
    Duration senderDeadline = spec.duration().plus(spec.drainDeadline());
    try {
      ReceiverThread.await(r.senderDone, senderDeadline, "the tls-netty sender");
      ReceiverThread.await(r.receiverDone, spec.drainDeadline(), "the tls-netty receiver");
    } catch (Exception e) {
      throw ReceiverThread.failureOr(r.receiverDone, e);
    }
    Payload.StreamReceiver in = r.in;
    return new ThroughputResult(
        size,
        r.sent,
        in.delivered(),
        in.lastDeliveredNanos() - r.start,
        r.writesCompleted,
        r.lastWriteCompletionNanos - r.start,
        in.sequenceErrors(),
        spec.verify() ? r.crc.getValue() : 0,
        in.checksum());
  }

  /** The state of one run; each field is written by one event loop and read after the futures. */
  private static final class Run {
    final RunSpec spec;
    final int size;
    final Histogram latency;
    final Payload.StreamReceiver in;
    final CRC32C crc = new CRC32C();
    final CompletableFuture<Void> senderDone = new CompletableFuture<>();
    final CompletableFuture<Void> receiverDone = new CompletableFuture<>();
    final long[] batchEnds = new long[4096];
    long batchesWritten;
    long batchesCompleted;
    long start;
    long sent;
    long writesCompleted;
    long lastWriteCompletionNanos;
    long messageStartNanos;
    boolean ending;
    volatile long deliveredAtNanos;

    Run(RunSpec spec, int size, Histogram latency) {
      this.spec = spec;
      this.size = size;
      this.latency = latency;
      this.in = new Payload.StreamReceiver(size, spec.verify());
    }

    void fail(Throwable e) {
      senderDone.completeExceptionally(e);
      receiverDone.completeExceptionally(e);
    }
  }

  /** The sending end, on the sender's event loop. */
  // writes use the void promise or a tracked one whose listener reports failures
  @SuppressWarnings("FutureReturnValueIgnored")
  @io.netty.channel.ChannelHandler.Sharable
  private final class SenderHandler extends ChannelInboundHandlerAdapter
      implements ChannelFutureListener {
    private Run run;
    private ChannelHandlerContext ctx;

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      this.ctx = ctx;
    }

    void begin(Run r) {
      run = r;
      r.start = System.nanoTime();
      r.lastWriteCompletionNanos = r.start;
      if (r.latency != null) {
        sendNext();
      } else {
        pump();
      }
    }

    /** Throughput: writes while the channel takes more, flushing per batch. */
    private void pump() {
      Run r = run;
      if (r == null || r.ending) {
        return;
      }
      Channel ch = ctx.channel();
      int inBatch = 0;
      // A flush may drain the channel below its low water mark and run this again, nested (Netty
      // fires the writability change inside the flush); after a nested run ended the run, stop.
      while (ch.isWritable() && !r.ending) {
        if (r.spec.stop(r.start, r.sent)) {
          if (inBatch > 0) {
            endBatch(r);
          }
          sendEnd(r);
          return;
        }
        boolean last = ++inBatch == BATCH;
        write(r, r.sent, last ? trackedPromise(r, r.sent + 1) : ch.voidPromise());
        r.sent++;
        if (last) {
          ctx.flush();
          inBatch = 0;
        }
      }
      if (inBatch > 0 && !r.ending) {
        endBatch(r);
      }
    }

    private void endBatch(Run r) {
      // an empty write whose future completes once everything before it is written
      ctx.write(Unpooled.EMPTY_BUFFER, trackedPromise(r, r.sent));
      ctx.flush();
    }

    /** A promise that, once complete, counts {@code messagesWritten} messages as written. */
    private ChannelPromise trackedPromise(Run r, long messagesWritten) {
      if (r.batchesWritten - r.batchesCompleted == r.batchEnds.length) {
        throw new IllegalStateException("too many unfinished batches");
      }
      r.batchEnds[(int) (r.batchesWritten++ % r.batchEnds.length)] = messagesWritten;
      ChannelPromise p = ctx.newPromise();
      p.addListener(this);
      return p;
    }

    /** A tracked batch completed: batches complete in order. */
    @Override
    public void operationComplete(ChannelFuture future) {
      Run r = run;
      if (!future.isSuccess()) {
        r.fail(future.cause());
        return;
      }
      long end = r.batchEnds[(int) (r.batchesCompleted++ % r.batchEnds.length)];
      r.writesCompleted = Math.min(end, r.sent);
      r.lastWriteCompletionNanos = System.nanoTime();
    }

    private void write(Run r, long sequence, ChannelPromise promise) {
      ByteBuf stamp = ctx.alloc().directBuffer(Long.BYTES).writeLong(sequence);
      if (r.spec.verify() && sequence != Payload.END) {
        r.crc.update(stamp.nioBuffer());
        r.crc.update(body.nioBuffer(Long.BYTES, r.size - Long.BYTES));
      }
      ctx.write(stamp, ctx.voidPromise());
      ctx.write(body.retainedSlice(Long.BYTES, r.size - Long.BYTES), promise);
    }

    private void sendEnd(Run r) {
      if (r.ending) {
        return; // sent once only, whichever (possibly nested) pump saw the stop first
      }
      r.ending = true;
      ChannelPromise p = ctx.newPromise();
      p.addListener(
          f -> {
            if (f.isSuccess()) {
              r.senderDone.complete(null);
            } else {
              r.fail(f.cause());
            }
          });
      write(r, Payload.END, p);
      ctx.flush();
    }

    /** Latency: one message, then wait for its acknowledgement. */
    private void sendNext() {
      Run r = run;
      if (r.spec.stop(r.start, r.sent)) {
        sendEnd(r);
        return;
      }
      r.messageStartNanos = System.nanoTime();
      write(r, r.sent, trackedPromise(r, r.sent + 1));
      r.sent++;
      ctx.flush();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      if (ctx.channel().isWritable() && run != null && run.latency == null) {
        pump();
      }
      ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ByteBuf acks = (ByteBuf) msg;
      int n = acks.readableBytes();
      acks.release();
      Run r = run;
      for (int i = 0; i < n && r != null && !r.ending; i++) {
        r.latency.recordValue(Math.max(0, r.deliveredAtNanos - r.messageStartNanos));
        sendNext();
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (run != null) {
        run.fail(cause);
      }
      ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (run != null) {
        run.fail(new IllegalStateException("tls-netty: the sender's connection closed"));
      }
    }
  }

  /** The receiving end, on the receiver's event loop. */
  // acknowledgements use the void promise: a failed write fires exceptionCaught
  @SuppressWarnings("FutureReturnValueIgnored")
  @io.netty.channel.ChannelHandler.Sharable
  private static final class ReceiverHandler extends ChannelInboundHandlerAdapter {
    private Run run;

    void begin(Run r) {
      run = r;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ByteBuf buf = (ByteBuf) msg;
      try {
        Run r = run;
        if (r == null) {
          throw new IllegalStateException("tls-netty: data outside a run");
        }
        int completed = 0;
        int n = buf.nioBufferCount();
        if (n == 1) {
          completed = r.in.consume(buf.internalNioBuffer(buf.readerIndex(), buf.readableBytes()));
        } else {
          for (ByteBuffer b : buf.nioBuffers()) {
            completed += r.in.consume(b);
          }
        }
        if (completed > 0 && r.latency != null) {
          r.deliveredAtNanos = r.in.lastDeliveredNanos();
          ctx.writeAndFlush(ctx.alloc().buffer(1).writeByte(1), ctx.voidPromise());
        }
        if (r.in.ended()) {
          r.receiverDone.complete(null);
        }
      } catch (RuntimeException e) {
        if (run != null) {
          run.fail(e);
        }
      } finally {
        buf.release();
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (run != null) {
        run.fail(cause);
      }
      ctx.close();
    }
  }

  @Override
  public void close() {
    if (senderChannel != null) {
      senderChannel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
    if (serverChannel != null) {
      serverChannel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
    if (body != null) {
      body.release();
      body = null;
    }
    if (senderGroup != null) {
      senderGroup
          .shutdownGracefully(0, 1, TimeUnit.SECONDS)
          .awaitUninterruptibly(10, TimeUnit.SECONDS);
    }
    if (receiverGroup != null) {
      receiverGroup
          .shutdownGracefully(0, 1, TimeUnit.SECONDS)
          .awaitUninterruptibly(10, TimeUnit.SECONDS);
    }
    senderChannel = null;
    serverChannel = null;
    senderGroup = null;
    receiverGroup = null;
  }
}
