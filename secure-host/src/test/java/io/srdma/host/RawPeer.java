package io.srdma.host;

import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.FrameReader;
import io.srdma.channel.protocol.FrameWriter;
import io.srdma.channel.protocol.MessageType;
import io.srdma.channel.protocol.Side;
import io.srdma.keys.AuthenticatedPeer;
import io.srdma.keys.KeySchedule;
import io.srdma.keys.MutualTls;
import io.srdma.keys.Role;
import io.srdma.keys.TlsBinding;
import io.srdma.keys.X25519KeyPair;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProviders;
import java.io.IOException;
import java.net.Socket;
import java.security.SecureRandom;
import java.time.Duration;

/**
 * A session to the rig's host established by raw frames (HELLO, key confirmation, queue pair), with
 * no SDK behind it: tests then misbehave on its control connection as an attacker would. Closes the
 * socket, then the verbs objects.
 */
final class RawPeer implements AutoCloseable {
  final Socket socket;
  final FrameReader reader;
  final ControlProxy proxy;
  private final DeviceContext context;
  private final ProtectionDomain pd;

  /** The peer's completion queue (send and receive) and queue pair: tests post on them. */
  final CompletionQueue cq;

  final QueuePair qp;

  /**
   * The host's ERROR text when it refused the handshake ({@link #RawPeer(ChannelRig, String,
   * String, int, Step)}), else null.
   */
  final String refusal;

  /** A step of the handshake, on the peer's control connection. */
  interface Step {
    void run(ControlProxy proxy) throws IOException;
  }

  RawPeer(ChannelRig rig, String tenant, String peerName) throws IOException {
    this(rig, tenant, peerName, 0, p -> {});
  }

  /**
   * A session whose HELLO announces {@code capabilities} and which runs {@code beforeConfirm} just
   * before its KEY_CONFIRM; when the host answers that with ERROR, {@link #refusal} is its text and
   * the queue pair is not connected.
   */
  RawPeer(ChannelRig rig, String tenant, String peerName, int capabilities, Step beforeConfirm)
      throws IOException {
    this(rig, tenant, peerName, capabilities, null, beforeConfirm);
  }

  /**
   * {@link #RawPeer(ChannelRig, String, String, int, Step)} whose HELLO names {@code responder}
   * (IPv4 address and port, 6 bytes) as the address the host's queue pair connects to, instead of
   * its own device's responder (null): a peer that runs a hostile responder of its own. Its queue
   * pair still connects to the host's, and sends from its own device.
   */
  RawPeer(
      ChannelRig rig,
      String tenant,
      String peerName,
      int capabilities,
      byte[] responder,
      Step beforeConfirm)
      throws IOException {
    context = RdmaProviders.firstDevice(ChannelRig.PROVIDER).open(new DeviceOptions());
    pd = context.allocateProtectionDomain();
    cq = context.createCompletionQueue(16);
    qp = pd.createQueuePair(new QueuePairAttributes(cq, cq, 4, 1, 1, 1));
    qp.init(0);
    Socket connected = null;
    try {
      MutualTls tls = MutualTls.client(rig.credential(tenant, peerName), rig.ca.trust());
      AuthenticatedPeer peer =
          tls.connect(rig.host.address(), ChannelRig.scaled(Duration.ofSeconds(5)));
      connected = peer.socket();
      socket = connected;
      socket.setSoTimeout((int) ChannelRig.scaled(Duration.ofSeconds(5)).toMillis());
      reader = new FrameReader(socket.getInputStream(), Side.SERVER);
      proxy = new ControlProxy(new FrameWriter(socket.getOutputStream()));
      try (X25519KeyPair local = X25519KeyPair.generate(new SecureRandom())) {
        ConnectionInfo own = qp.localInfo();
        ConnectionInfo named =
            responder == null ? own : new ConnectionInfo(own.qpn(), own.psn(), responder);
        proxy.hello(1, 1, capabilities, local.publicKey(), named);
        var ack = reader.read().expect(MessageType.HELLO_ACK).helloAck();
        // the reader reuses its buffer: copy what the next read would overwrite
        ConnectionInfo hostInfo = ack.connectionInfo();
        try (TlsBinding binding = peer.binding(Role.INITIATOR);
            KeySchedule schedule =
                KeySchedule.builder()
                    .role(Role.INITIATOR)
                    .localKey(local)
                    .peerPublicKey(ack.publicKey())
                    .binding(binding)
                    .sessionId(ack.sessionId())
                    .initiatorQpn(qp.qpn())
                    .responderQpn(hostInfo.qpn())
                    .establish()) {
          beforeConfirm.run(proxy);
          proxy.keyConfirm(0, 0, schedule.current().confirmation());
          Frame answer = reader.read();
          if (answer.type() == MessageType.ERROR) {
            refusal = answer.error().text();
            return;
          }
          answer.expect(MessageType.KEY_CONFIRM);
          refusal = null;
          qp.readyToReceive(hostInfo);
          qp.readyToSend();
        }
      }
    } catch (IOException | RuntimeException e) {
      // refused (at accept, in TLS, at HELLO): nothing of it stays open
      try {
        if (connected != null) {
          connected.close();
        }
      } finally {
        closeVerbs();
      }
      throw e;
    }
  }

  @Override
  public void close() throws IOException {
    try {
      socket.close();
    } finally {
      closeVerbs();
    }
  }

  private void closeVerbs() {
    qp.close();
    cq.close();
    pd.close();
    context.close();
  }
}
