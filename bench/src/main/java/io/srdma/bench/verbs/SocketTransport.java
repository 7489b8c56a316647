package io.srdma.bench.verbs;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The baseline: a plain Java NIO SocketChannel on loopback. Stream mode: the peer drains. Echo
 * mode: the peer reads each message and writes it back (ping-pong).
 */
final class SocketTransport implements Transport {
  private final SocketChannel client;
  private final SocketChannel server;
  private final ServerSocketChannel listener;
  private final ByteBuffer out;
  private final ByteBuffer in;
  private final Thread peer;

  SocketTransport(int size, boolean echo) throws IOException {
    listener =
        ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    client = SocketChannel.open(listener.getLocalAddress());
    server = listener.accept();
    client.setOption(StandardSocketOptions.TCP_NODELAY, true);
    server.setOption(StandardSocketOptions.TCP_NODELAY, true);
    out = ByteBuffer.allocateDirect(size);
    in = ByteBuffer.allocateDirect(size);
    peer =
        new Thread(
            echo ? () -> echo(size) : this::drain,
            echo ? "bench-socket-echo" : "bench-socket-drain");
    peer.setDaemon(true);
    peer.start();
  }

  private void drain() {
    ByteBuffer sink = ByteBuffer.allocateDirect(256 * 1024);
    try {
      while (server.read(sink.clear()) >= 0) {
        // discard
      }
    } catch (IOException e) {
      // closed at tear-down
    }
  }

  private void echo(int size) {
    ByteBuffer buf = ByteBuffer.allocateDirect(size);
    try {
      while (true) {
        buf.clear();
        while (buf.hasRemaining()) {
          if (server.read(buf) < 0) {
            return;
          }
        }
        buf.flip();
        while (buf.hasRemaining()) {
          server.write(buf);
        }
      }
    } catch (IOException e) {
      // closed at tear-down
    }
  }

  @Override
  public void streamBatch() throws IOException {
    for (int i = 0; i < BATCH; i++) {
      out.clear();
      while (out.hasRemaining()) {
        client.write(out);
      }
    }
  }

  @Override
  public void roundTrip() throws IOException {
    out.clear();
    while (out.hasRemaining()) {
      client.write(out);
    }
    in.clear();
    while (in.hasRemaining()) {
      if (client.read(in) < 0) {
        throw new EOFException("echo peer closed");
      }
    }
  }

  @Override
  public void close() throws IOException {
    client.close();
    server.close();
    listener.close();
    try {
      peer.join(5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
