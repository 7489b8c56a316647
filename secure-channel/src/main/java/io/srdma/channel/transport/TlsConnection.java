package io.srdma.channel.transport;

import static io.srdma.channel.protocol.FrameHeaderFlyweight.BODY_LENGTH_OFFSET;
import static io.srdma.channel.protocol.FrameHeaderFlyweight.HEADER_LENGTH;

import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.FrameReader;
import io.srdma.channel.protocol.MessageType;
import io.srdma.channel.protocol.Side;
import io.srdma.keys.KeyExchangeException;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLProtocolException;

/**
 * One control connection (host or client side): TLS 1.3 through an {@link SSLEngine} over a
 * non-blocking socket, driven by its {@link EventLoop} (reads, unwraps, handshake messages, writes
 * the socket could not take at once) with the engine's delegated tasks on an executor the owner
 * gives. It holds no thread: its owner learns of progress through {@code kick} and then takes what
 * is ready ({@link #handshakeFinished}, {@link #nextFrame}, {@link #isClosed}) on a thread of its
 * own choosing, one at a time. Not API: the host and the SDK use it; its methods may change.
 *
 * <p>Bounded: the bytes read and decrypted but not yet taken as frames are at most one TLS record
 * plus the largest frame; while they fill that, the loop stops reading from the socket, so a peer
 * that sends faster than its session handles frames is held back by TCP. A write never waits for
 * the peer: what the socket does not take at once waits in a buffer of one TLS record, grown to at
 * most {@value #MAX_PENDING_RECORDS} records for a peer that reads slowly; a write that would need
 * more closes the connection (the peer stopped reading) and fails. So no thread of the owner is
 * ever held by a peer that does not read. Before the handshake finished, a peer may send at most
 * {@value #MAX_HANDSHAKE_BYTES} bytes in all: its certificates are parsed before it is
 * authenticated.
 *
 * <p>Thread safety: {@link #onReady} and {@link #register} run on the loop's thread; {@link
 * #nextFrame} on one consuming thread at a time; {@link #output} is thread-safe (each write is one
 * or more whole TLS records); {@link #close} and the state getters may be called from any thread.
 *
 * <p>Buffers: three heap buffers of about one TLS record each (bytes in, decrypted bytes, bytes
 * out), each held only while bytes wait in it: emptied, it is zeroed and given back to a {@link
 * BufferPool} shared by every connection of the process, and taken again when bytes come. An idle
 * connection holds none of them (about 50 KiB less per idle session); a busy one takes them from
 * the pool without allocating. Nothing is read from a buffer once given back, and the zeroing keeps
 * one connection's plaintext (the engine decrypts in place in the bytes read) from the next
 * connection that takes the buffer.
 */
public final class TlsConnection {
  /** TLS record content type of a handshake record (RFC 8446 §5.1): every ClientHello starts so. */
  public static final int HANDSHAKE_RECORD = 22;

  /** Most TLS records' worth of bytes a connection holds for a peer that does not read them. */
  public static final int MAX_PENDING_RECORDS = 4;

  /**
   * Most bytes a peer may send before the TLS handshake finished, records and all. Everything the
   * peer sends before it is authenticated, its certificate chain above all, is parsed by the JDK
   * (the X.509 parser recurses into constructed values); the JDK's own bound is one 32 KiB
   * handshake message ({@code jdk.tls.maxHandshakeMessageSize}), enough for a certificate nested
   * 8,000 deep that overflows a worker's stack. A deployment's handshake sends about 1.4 KiB each
   * way (JDK 17, two P-256 certificates); 16 KiB leaves room for larger key shares and a
   * HelloRetryRequest, while a certificate that fits in it nests at most about 3,700 deep, which
   * the JDK parses on a default 1 MiB stack. The bytes past it are never handed to the engine: the
   * connection fails with {@link KeyExchangeException.Reason#HANDSHAKE_TOO_LARGE}.
   */
  public static final int MAX_HANDSHAKE_BYTES = 16 * 1024;

  private final EventLoop loop;
  private final SocketChannel channel;
  private final SSLEngine engine;
  private final Executor tasks;
  private final Runnable kick;
  private final int appSize;
  private final int packetSize;
  private final BufferPool netPool; // netIn and netOut: one TLS record
  private final BufferPool appPool; // appIn: one record's plaintext and the largest frame
  private final ByteBuffer noInput = ByteBuffer.allocate(0); // unwrap's input while netIn is null
  private ByteBuffer netIn; // loop thread; null while empty
  private ByteBuffer appIn; // write mode; guarded by inLock; null while empty
  private ByteBuffer netOut; // write mode; guarded by outLock; null while empty
  private final Object inLock = new Object();
  private final ReentrantLock outLock = new ReentrantLock();
  private final FrameReader reader;
  private final OutputStream output = new Output();
  private SelectionKey key; // loop thread
  private volatile boolean runningTasks; // written on the loop thread
  private volatile boolean readsPaused;
  private volatile int firstByte = -1;
  private long handshakeBytes; // loop thread: read before the handshake finished
  private volatile boolean handshakeFinished;
  private volatile IOException failure;
  private volatile boolean closed;

  /**
   * @param channel a connected socket in non-blocking mode; this connection closes it
   * @param engine configured for its side (e.g. {@code MutualTls.configure}), handshake not begun
   * @param peer the side that sends what this connection reads
   * @param tasks runs the engine's delegated tasks (certificate checks, signatures)
   * @param kick tells the owner something is ready; called on any thread, must not block
   */
  public TlsConnection(
      EventLoop loop,
      SocketChannel channel,
      SSLEngine engine,
      Side peer,
      Executor tasks,
      Runnable kick) {
    this.loop = loop;
    this.channel = channel;
    this.engine = engine;
    this.tasks = tasks;
    this.kick = kick;
    this.packetSize = engine.getSession().getPacketBufferSize();
    this.appSize = engine.getSession().getApplicationBufferSize();
    this.netPool = BufferPool.of(packetSize);
    this.appPool = BufferPool.of(appSize + HEADER_LENGTH + MessageType.largestBodyLength());
    this.reader = new FrameReader(new AppInput(), peer);
  }

  /** The engine (its session once {@link #handshakeFinished}). */
  public SSLEngine engine() {
    return engine;
  }

  /** The first byte the peer sent, or -1 before it arrived. */
  public int firstByte() {
    return firstByte;
  }

  /**
   * Whether the handshake waits for the owner's executor: its delegated tasks (certificate checks,
   * signatures) are queued or running there, so the peer is not the one it waits for. Any thread.
   */
  public boolean tasksPending() {
    return runningTasks;
  }

  /** Whether the TLS handshake finished (the peer is not verified yet: the session does that). */
  public boolean handshakeFinished() {
    return handshakeFinished;
  }

  /** Why the connection failed or ended (TLS alert, reset, the peer's end of stream), or null. */
  public IOException failure() {
    return failure;
  }

  public boolean isClosed() {
    return closed;
  }

  /** Frames are written here: thread-safe, each write wrapped into whole TLS records at once. */
  public OutputStream output() {
    return output;
  }

  /** Registers with the loop's selector (loop thread). */
  public void register(java.nio.channels.Selector selector) {
    if (closed) {
      return;
    }
    try {
      key = channel.register(selector, SelectionKey.OP_READ, this);
    } catch (ClosedChannelException e) {
      fail(e);
    }
  }

  /**
   * Client side: starts the handshake (the ClientHello) once {@link #register registered} (loop
   * thread). A server's handshake starts with the peer's first bytes.
   */
  public void beginHandshake() {
    if (closed) {
      return;
    }
    try {
      engine.beginHandshake();
      process();
    } catch (IOException e) {
      fail(e);
    } catch (RuntimeException e) {
      fail(new SSLException("TLS engine failed: " + e, e));
    }
  }

  /** The socket is readable or writable (loop thread). */
  public void onReady(SelectionKey k) {
    try {
      if (k.isValid() && k.isWritable()) {
        flushFromLoop();
      }
      if (k.isValid() && k.isReadable()) {
        read();
      }
    } catch (IOException e) {
      fail(e);
    } catch (RuntimeException e) {
      fail(new SSLException("TLS engine failed: " + e, e));
    }
  }

  private void read() throws IOException {
    if (netIn == null) {
      netIn = netPool.acquire();
    }
    int n = channel.read(netIn);
    if (n < 0) {
      fail(new EOFException("the peer closed the connection"));
      return;
    }
    if (!handshakeFinished) {
      handshakeBytes += n;
      if (handshakeBytes > MAX_HANDSHAKE_BYTES) {
        // refused before the engine sees these bytes: the message they belong to is never parsed
        fail(handshakeTooLarge());
        return;
      }
    }
    if (firstByte < 0 && netIn.position() > 0) {
      firstByte = netIn.get(0) & 0xFF;
      kick.run(); // the owner moves its deadline, or refuses a connection that is not TLS
      if (firstByte != HANDSHAKE_RECORD && !engine.getUseClientMode()) {
        // (a client reads on: a server's first record may be an alert that says why it refused)
        setInterest(0);
        return;
      }
    }
    process();
  }

  private static SSLProtocolException handshakeTooLarge() {
    String why =
        "the peer sent more than "
            + MAX_HANDSHAKE_BYTES
            + " bytes before its TLS handshake finished (a certificate chain larger or more deeply"
            + " nested than this deployment issues); refused unparsed";
    SSLProtocolException e = new SSLProtocolException(why);
    e.initCause(new KeyExchangeException(KeyExchangeException.Reason.HANDSHAKE_TOO_LARGE, why));
    return e;
  }

  /**
   * Unwraps what was read and answers the handshake, as far as possible without blocking; gives
   * back the input buffer once it holds no partial record (loop thread).
   */
  private void process() throws IOException {
    try {
      unwrapAll();
    } finally {
      if (netIn != null && netIn.position() == 0) {
        netPool.release(netIn);
        netIn = null;
      }
    }
  }

  private void unwrapAll() throws IOException {
    while (!closed && !runningTasks) {
      SSLEngineResult.HandshakeStatus hs = engine.getHandshakeStatus();
      if (hs == SSLEngineResult.HandshakeStatus.NEED_TASK) {
        runTasks();
        return;
      }
      if (hs == SSLEngineResult.HandshakeStatus.NEED_WRAP) {
        wrapHandshake();
        continue;
      }
      SSLEngineResult r;
      synchronized (inLock) {
        if (appIn == null) {
          appIn = appPool.acquire();
        }
        if (appIn.remaining() < appSize) {
          pauseReads();
          return;
        }
        ByteBuffer src = netIn != null ? netIn.flip() : noInput;
        try {
          r = engine.unwrap(src, appIn);
        } finally {
          if (netIn != null) {
            netIn.compact();
          }
          releaseEmptyAppIn();
        }
      }
      switch (r.getStatus()) {
        case BUFFER_UNDERFLOW -> {
          if (netIn != null && !netIn.hasRemaining()) {
            // the engine waits for a record longer than the whole buffer, which TLS 1.3 never
            // sends (2^14 + 256 bytes at most, RFC 8446 5.2): more bytes can never arrive, and the
            // socket stays readable, so waiting would spin this loop until a deadline
            fail(
                new SSLProtocolException(
                    "the peer sent a TLS record longer than "
                        + netIn.capacity()
                        + " bytes (TLS 1.3 allows 16,640 after its header)"));
          }
          return; // a partial record: wait for more bytes
        }
        case BUFFER_OVERFLOW -> {
          pauseReads();
          return;
        }
        case CLOSED -> {
          fail(new EOFException("the peer closed the TLS connection"));
          return;
        }
        case OK -> {}
      }
      if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.FINISHED) {
        finished();
      }
      if (r.bytesProduced() > 0) {
        kick.run();
      }
      if (r.bytesConsumed() == 0
          && r.bytesProduced() == 0
          && r.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NEED_WRAP
          && r.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NEED_TASK) {
        return;
      }
    }
  }

  private void finished() {
    handshakeFinished = true;
    kick.run();
  }

  /** The engine's delegated tasks (certificate checks, signatures) run on a worker. */
  private void runTasks() {
    runningTasks = true;
    setInterest(0);
    try {
      tasks.execute(
          () -> {
            try {
              Runnable t;
              while ((t = engine.getDelegatedTask()) != null) {
                t.run();
              }
            } catch (RuntimeException | StackOverflowError e) {
              // the engine reports its tasks' exceptions itself; what escapes it left the
              // handshake half done: the connection fails now instead of sitting, tasks pending,
              // until a deadline that would blame the host. The stack has unwound: the worker
              // goes on. (MAX_HANDSHAKE_BYTES keeps peer input from nesting this deep.)
              loop.execute(() -> taskFailed(e));
              return;
            } catch (Error e) {
              loop.execute(() -> taskFailed(e));
              throw e; // the VM's trouble, not this connection's: the worker's owner sees it
            }
            loop.execute(this::tasksDone);
          });
    } catch (RejectedExecutionException e) {
      fail(new IOException("the host is closing"));
    }
  }

  private void taskFailed(Throwable e) {
    runningTasks = false;
    fail(new SSLException("a TLS handshake task failed: " + e.getClass().getName(), e));
  }

  private void tasksDone() {
    runningTasks = false;
    if (closed) {
      return;
    }
    setInterest(SelectionKey.OP_READ | (netOutPending() ? SelectionKey.OP_WRITE : 0));
    try {
      process();
    } catch (IOException e) {
      fail(e);
    } catch (RuntimeException e) {
      fail(new SSLException("TLS engine failed: " + e, e));
    }
  }

  private void wrapHandshake() throws IOException {
    outLock.lock();
    try {
      SSLEngineResult r = wrapLocked(ByteBuffer.allocate(0));
      if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.FINISHED) {
        finished();
      }
      flushLocked();
    } finally {
      outLock.unlock();
    }
  }

  /**
   * Wraps into {@link #netOut}, flushing first and growing it (bounded) when the socket is full;
   * never waits. Caller holds outLock.
   */
  private SSLEngineResult wrapLocked(ByteBuffer src) throws IOException {
    if (closed) {
      throw new IOException("connection closed");
    }
    if (netOut != null && netOut.remaining() < packetSize) {
      flushLocked();
      if (netOut != null && netOut.remaining() < packetSize) {
        if (netOut.capacity() + packetSize > MAX_PENDING_RECORDS * packetSize) {
          int waiting = netOut.position();
          close();
          throw new IOException(
              "the peer does not read: " + waiting + " bytes wait for it; connection closed");
        }
        ByteBuffer bigger = ByteBuffer.allocate(netOut.capacity() + packetSize);
        netOut.flip();
        bigger.put(netOut);
        netOut = bigger;
      }
    }
    if (netOut == null) {
      netOut = netPool.acquire();
    }
    SSLEngineResult r = engine.wrap(src, netOut);
    if (r.getStatus() == SSLEngineResult.Status.CLOSED && src.hasRemaining()) {
      throw new IOException("TLS connection closed");
    }
    return r;
  }

  /**
   * Writes what the socket takes now; asks the loop to finish the rest, or gives the buffer back
   * when all was written. Caller holds outLock.
   */
  private void flushLocked() throws IOException {
    if (netOut == null) {
      return;
    }
    if (netOut.position() > 0) {
      netOut.flip();
      try {
        channel.write(netOut);
      } finally {
        netOut.compact();
      }
    }
    if (netOut.position() > 0) {
      if (loop.inLoop()) {
        addInterest(SelectionKey.OP_WRITE);
      } else {
        loop.execute(() -> addInterest(SelectionKey.OP_WRITE));
      }
    } else {
      releaseNetOut();
    }
  }

  /**
   * Gives back the empty output buffer; a grown one (a slow reader caught up) is left to the
   * collector: it held only ciphertext. Caller holds outLock.
   */
  private void releaseNetOut() {
    if (netOut != null) {
      netPool.release(netOut);
      netOut = null;
    }
  }

  /** Gives back the decrypted bytes' buffer once every byte was taken. Caller holds inLock. */
  private void releaseEmptyAppIn() {
    if (appIn != null && appIn.position() == 0) {
      appPool.release(appIn);
      appIn = null;
    }
  }

  private boolean netOutPending() {
    outLock.lock();
    try {
      return netOut != null && netOut.position() > 0;
    } finally {
      outLock.unlock();
    }
  }

  private void flushFromLoop() throws IOException {
    outLock.lock();
    try {
      if (netOut != null && netOut.position() > 0) {
        netOut.flip();
        try {
          channel.write(netOut);
        } finally {
          netOut.compact();
        }
      }
      if (netOut == null || netOut.position() == 0) {
        key.interestOps(key.interestOps() & ~SelectionKey.OP_WRITE);
        releaseNetOut();
      }
    } finally {
      outLock.unlock();
    }
  }

  /**
   * The next whole frame, or null when none is complete yet (strand). A frame whose header is bad
   * throws as soon as the header is here.
   *
   * @throws io.srdma.channel.protocol.ProtocolException what was wrong with the frame
   */
  public Frame nextFrame() throws IOException {
    synchronized (inLock) {
      int available = appIn == null ? 0 : appIn.position();
      if (available < HEADER_LENGTH) {
        return null;
      }
      int body = appIn.getInt(BODY_LENGTH_OFFSET);
      boolean refused = body < 0 || body > MessageType.largestBodyLength();
      if (!refused && available < HEADER_LENGTH + body) {
        return null;
      }
    }
    Frame f = reader.read(); // every byte it reads is here: never blocks
    synchronized (inLock) {
      releaseEmptyAppIn();
    }
    if (readsPaused) {
      loop.execute(this::resumeReads);
    }
    return f;
  }

  private void pauseReads() {
    readsPaused = true;
    setInterest(key.interestOps() & ~SelectionKey.OP_READ);
  }

  /** Frames were taken: read again (loop thread). */
  private void resumeReads() {
    if (closed || !readsPaused || runningTasks) {
      return;
    }
    readsPaused = false;
    addInterest(SelectionKey.OP_READ);
    try {
      process();
    } catch (IOException e) {
      fail(e);
    } catch (RuntimeException e) {
      fail(new SSLException("TLS engine failed: " + e, e));
    }
  }

  private void setInterest(int ops) {
    if (key != null && key.isValid()) {
      key.interestOps(ops);
    }
  }

  private void addInterest(int ops) {
    if (key != null && key.isValid()) {
      key.interestOps(key.interestOps() | ops);
    }
  }

  private void fail(IOException e) {
    if (failure == null) {
      failure = e;
    }
    if (e instanceof SSLException) {
      closeGracefully(); // the engine's alert tells the peer why, as far as the socket takes it
    } else {
      close();
    }
  }

  /**
   * Says goodbye in TLS (close_notify, as far as the socket takes it now without waiting) and
   * closes; any thread.
   */
  public void closeGracefully() {
    if (closed) {
      return;
    }
    if (outLock.tryLock()) {
      try {
        engine.closeOutbound();
        if (netOut == null) {
          netOut = netPool.acquire();
        }
        if (netOut.remaining() >= packetSize) {
          engine.wrap(ByteBuffer.allocate(0), netOut);
        }
        netOut.flip();
        channel.write(netOut);
      } catch (IOException | RuntimeException e) {
        // closing anyway
      } finally {
        releaseNetOut(); // nothing more is written: wrapLocked refuses once closed
        outLock.unlock();
      }
    }
    close();
  }

  /** Closes the socket and wakes writers and the session; never blocks; any thread. */
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      channel.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    if (!loop.inLoop()) {
      loop.wakeup();
    }
    kick.run();
  }

  /** Buffers held now: 0 for an idle connection (loop thread; tests). */
  int heldBuffers() {
    int n = netIn != null ? 1 : 0;
    synchronized (inLock) {
      n += appIn != null ? 1 : 0;
    }
    outLock.lock();
    try {
      return n + (netOut != null ? 1 : 0);
    } finally {
      outLock.unlock();
    }
  }

  /** The sizes of its pooled buffers: one TLS record, then the decrypted bytes' (tests). */
  int[] bufferSizes() {
    return new int[] {netPool.size(), appPool.size()};
  }

  /** A copy of the whole decrypted bytes' buffer, or null while none is held (tests). */
  byte[] decryptedBytes() {
    synchronized (inLock) {
      return appIn == null ? null : appIn.array().clone();
    }
  }

  /** The decrypted bytes, read only by {@link FrameReader} inside {@link #nextFrame}. */
  private final class AppInput extends InputStream {
    @Override
    public int read() {
      synchronized (inLock) {
        if (appIn == null || appIn.position() == 0) {
          return -1;
        }
        appIn.flip();
        int b = appIn.get() & 0xFF;
        appIn.compact();
        return b;
      }
    }

    @Override
    public int read(byte[] b, int off, int len) {
      synchronized (inLock) {
        if (len == 0) {
          return 0;
        }
        if (appIn == null || appIn.position() == 0) {
          return -1;
        }
        appIn.flip();
        int n = Math.min(len, appIn.remaining());
        appIn.get(b, off, n);
        appIn.compact();
        return n;
      }
    }
  }

  /** Frames out: each write becomes whole TLS records in the outgoing buffer, then the socket. */
  private final class Output extends OutputStream {
    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      ByteBuffer src = ByteBuffer.wrap(b, off, len);
      outLock.lock();
      try {
        while (src.hasRemaining()) {
          wrapLocked(src);
        }
        flushLocked();
      } catch (RuntimeException e) {
        throw new SSLException("TLS engine failed: " + e, e);
      } finally {
        outLock.unlock();
      }
    }

    @Override
    public void flush() {
      // every write is flushed as far as the socket takes it; the loop writes the rest
    }
  }
}
