package io.srdma.verbs.soft;

import io.srdma.verbs.ConnectionInfo;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The responder a soft QP's requester connects to, played by the test: it answers the HELLO, reads
 * the requests and sends whatever responses the test scripts — a hostile or broken RNIC at the
 * other end of the wire.
 */
final class FakeResponder implements AutoCloseable {
  static final int QPN = 0x5A5A5A;
  static final int PSN = 0x10;

  /** One request as it arrived (its payload, if any, read and dropped). */
  record Request(byte opcode, int psn, int length) {}

  private final ServerSocketChannel server;
  private final SocketChannel peer;
  private final RequestFlyweight request = new RequestFlyweight();
  private final ResponseFlyweight response = new ResponseFlyweight();

  private FakeResponder(ServerSocketChannel server, SocketChannel peer) {
    this.server = server;
    this.peer = peer;
  }

  /** Takes {@code qp} (fresh, in RESET) to RTS against a fake responder. */
  static FakeResponder connect(SoftQueuePair qp)
      throws IOException, InterruptedException, ExecutionException, TimeoutException {
    ServerSocketChannel server = ServerSocketChannel.open();
    try {
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      byte[] address =
          SoftDeviceContext.encodeAddress((InetSocketAddress) server.getLocalAddress());
      qp.init(0);
      qp.readyToReceive(new ConnectionInfo(QPN, PSN, address));
      CompletableFuture<Void> rts = CompletableFuture.runAsync(qp::readyToSend);
      SocketChannel peer = server.accept();
      FakeResponder fake = new FakeResponder(server, peer);
      fake.readFully(ByteBuffer.allocate(RequestFlyweight.LENGTH)); // the HELLO
      fake.respond(ResponseFlyweight.TYPE_HELLO_ACK, (byte) 0, 0, 0);
      rts.get(10, TimeUnit.SECONDS);
      return fake;
    } catch (IOException | InterruptedException | ExecutionException | TimeoutException e) {
      server.close();
      throw e;
    }
  }

  /** Reads the next request. */
  Request next() throws IOException {
    ByteBuffer h = readFully(ByteBuffer.allocate(RequestFlyweight.LENGTH));
    request.wrap(h, 0);
    Request r = new Request(request.opcode(), request.psn(), request.length());
    if (RequestFlyweight.carriesPayload(r.opcode())) {
      readFully(ByteBuffer.allocate(r.length()));
    }
    return r;
  }

  void ack(int psn) throws IOException {
    respond(ResponseFlyweight.TYPE_ACK, (byte) 0, psn, 0);
  }

  void nak(int psn, int syndrome) throws IOException {
    respond(ResponseFlyweight.TYPE_NAK, (byte) syndrome, psn, 0);
  }

  /** A READ response of {@code length} bytes, each {@code value}. */
  void readResponse(int psn, int length, byte value) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(ResponseFlyweight.LENGTH + length);
    response.wrap(b, 0).encode(ResponseFlyweight.TYPE_READ_RESP, (byte) 0, psn, length);
    for (int i = ResponseFlyweight.LENGTH; i < b.capacity(); i++) {
      b.put(i, value);
    }
    writeFully(b);
  }

  /**
   * An ACK for {@code psn} whose header byte {@code at} is then set to {@code value} (a reserved
   * byte, the syndrome): a header no honest responder writes.
   */
  void ackWithHeaderByte(int psn, int at, byte value) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(ResponseFlyweight.LENGTH);
    response.wrap(b, 0).encode(ResponseFlyweight.TYPE_ACK, (byte) 0, psn, 0);
    b.put(at, value);
    writeFully(b);
  }

  /** True once the requester closed the connection (read until end of stream). */
  boolean closedByRequester() throws IOException {
    ByteBuffer sink = ByteBuffer.allocate(256);
    while (true) {
      sink.clear();
      try {
        if (peer.read(sink) < 0) {
          return true;
        }
      } catch (IOException reset) {
        return true;
      }
    }
  }

  private void respond(byte type, byte syndrome, int psn, int length) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(ResponseFlyweight.LENGTH);
    response.wrap(b, 0).encode(type, syndrome, psn, length);
    writeFully(b);
  }

  private void writeFully(ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      peer.write(b);
    }
  }

  private ByteBuffer readFully(ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      if (peer.read(b) < 0) {
        throw new EOFException("requester closed the connection");
      }
    }
    return b.flip();
  }

  @Override
  public void close() throws IOException {
    peer.close();
    server.close();
  }
}
