package io.srdma.verbs.ibv;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;

/**
 * The Java side of rdma-core's {@code ibv_rc_pingpong}, for interop tests in the Soft-RoCE guest:
 * the same TCP exchange of {@code LID:QPN:PSN:GID} (a 52-byte NUL-terminated message, then "done"),
 * then SEND/RECV ping-pong of {@code size}-byte messages, {@code iters} each way, client first.
 *
 * <pre>
 *   server: RcPingpong server PORT ITERS SIZE     (then: ibv_rc_pingpong -g 1 ... 127.0.0.1)
 *   client: RcPingpong client HOST PORT ITERS SIZE (after: ibv_rc_pingpong -g 1 ...)
 * </pre>
 *
 * Prints {@code PINGPONG OK ...} and exits 0, or exits 1 with the reason.
 */
public final class RcPingpong {
  private static final long RECV_WRID = 1;
  private static final long SEND_WRID = 2;
  private static final int RX_DEPTH = 16;
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final int MESSAGE_LENGTH =
      "0000:000000:000000:00000000000000000000000000000000".length() + 1;

  private RcPingpong() {}

  /** Entry point. */
  public static void main(String[] args) throws Exception {
    boolean server = args[0].equals("server");
    int at = server ? 1 : 2;
    int port = Integer.parseInt(args[at]);
    int iters = Integer.parseInt(args[at + 1]);
    int size = Integer.parseInt(args[at + 2]);
    try (DeviceContext ctx = RdmaProviders.firstDevice("ibv").open(new DeviceOptions());
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        CompletionQueue cq = ctx.createCompletionQueue(RX_DEPTH + 2);
        QueuePair qp = pd.createQueuePair(new QueuePairAttributes(cq, cq, 1, RX_DEPTH, 1, 1));
        MemoryRegion mr =
            pd.registerMemory(ByteBuffer.allocateDirect(size), AccessFlags.LOCAL_WRITE)) {
      qp.init(0);
      ReceiveWorkRequest recv = new ReceiveWorkRequest(1).wrId(RECV_WRID);
      recv.sgl().set(mr, 0, size);
      for (int i = 0; i < RX_DEPTH; i++) {
        qp.postReceive(recv);
      }
      ConnectionInfo local = qp.localInfo();
      if (server) {
        try (ServerSocket listener = new ServerSocket()) {
          listener.setReuseAddress(true);
          listener.bind(new InetSocketAddress(port));
          listener.setSoTimeout((int) WAIT.toMillis());
          System.out.println("PINGPONG listening on " + port + " as " + wire(local));
          try (Socket s = listener.accept()) {
            s.setSoTimeout((int) WAIT.toMillis());
            ConnectionInfo remote = parse(readExactly(s, MESSAGE_LENGTH));
            qp.readyToReceive(remote);
            qp.readyToSend();
            write(s, wire(local));
            readExactly(s, "done".length() + 1);
            System.out.println("PINGPONG peer " + remote);
          }
        }
      } else {
        try (Socket s = new Socket()) {
          s.connect(new InetSocketAddress(args[1], port), (int) WAIT.toMillis());
          s.setSoTimeout((int) WAIT.toMillis());
          write(s, wire(local));
          ConnectionInfo remote = parse(readExactly(s, MESSAGE_LENGTH));
          OutputStream out = s.getOutputStream();
          out.write("done\0".getBytes(StandardCharsets.US_ASCII));
          out.flush();
          qp.readyToReceive(remote);
          qp.readyToSend();
          System.out.println("PINGPONG peer " + remote);
        }
      }
      long start = System.nanoTime();
      pingPong(server, qp, cq, mr, recv, iters, size);
      double seconds = (System.nanoTime() - start) / 1e9;
      System.out.printf(
          "PINGPONG OK role=%s iters=%d size=%d seconds=%.3f usec/iter=%.1f%n",
          server ? "server" : "client", iters, size, seconds, seconds * 1e6 / iters);
    }
  }

  private static void pingPong(
      boolean server,
      QueuePair qp,
      CompletionQueue cq,
      MemoryRegion mr,
      ReceiveWorkRequest recv,
      int iters,
      int size) {
    SendWorkRequest send = new SendWorkRequest(1).wrId(SEND_WRID).opcode(WrOpcode.SEND);
    send.sgl().set(mr, 0, size);
    WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion()};
    int scnt = 0;
    int rcnt = 0;
    long pending = RECV_WRID;
    if (!server) {
      qp.postSend(send);
      pending |= SEND_WRID;
    }
    while (scnt < iters || rcnt < iters) {
      int n = cq.await(wcs, WAIT);
      if (n == 0) {
        throw new IllegalStateException(
            "no completion within " + WAIT + " (sent " + scnt + ", received " + rcnt + ")");
      }
      for (int i = 0; i < n; i++) {
        WorkCompletion wc = wcs[i];
        if (wc.status() != WcStatus.SUCCESS) {
          throw new IllegalStateException("failed completion " + wc);
        }
        if (wc.wrId() == SEND_WRID) {
          scnt++;
        } else {
          rcnt++;
          qp.postReceive(recv);
        }
        pending &= ~wc.wrId();
        if (scnt < iters && pending == 0) {
          qp.postSend(send);
          pending = RECV_WRID | SEND_WRID;
        }
      }
    }
  }

  /** {@code %04x:%06x:%06x:<gid as 32 hex digits>}, as ibv_rc_pingpong writes it. */
  static String wire(ConnectionInfo info) {
    IbvAddress a = IbvAddress.decode(info.address());
    return String.format(
        "%04x:%06x:%06x:%s", a.lid(), info.qpn(), info.psn(), HexFormat.of().formatHex(a.gid()));
  }

  /** Parses the peer's message into connection info on port 1. */
  static ConnectionInfo parse(byte[] message) {
    String text = new String(message, StandardCharsets.US_ASCII);
    int nul = text.indexOf('\0');
    String[] parts = (nul >= 0 ? text.substring(0, nul) : text).split(":", -1);
    byte[] gid = HexFormat.of().parseHex(parts[3]);
    int lid = Integer.parseInt(parts[0], 16);
    return new ConnectionInfo(
        Integer.parseInt(parts[1], 16),
        Integer.parseInt(parts[2], 16),
        new IbvAddress(gid, lid, 1).encode());
  }

  private static void write(Socket s, String message) throws IOException {
    byte[] bytes = new byte[MESSAGE_LENGTH];
    byte[] text = message.getBytes(StandardCharsets.US_ASCII);
    System.arraycopy(text, 0, bytes, 0, text.length);
    OutputStream out = s.getOutputStream();
    out.write(bytes);
    out.flush();
  }

  private static byte[] readExactly(Socket s, int length) throws IOException {
    byte[] bytes = new byte[length];
    new DataInputStream(s.getInputStream()).readFully(bytes);
    return bytes;
  }
}
