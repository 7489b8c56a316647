package io.srdma.keys;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.SecureRandom;

/**
 * The minimal exchange the secure-channel module does in its own frames: swap X25519 public keys
 * and QP numbers, derive, swap and check confirmations.
 */
final class TestNegotiation {
  private static final SecureRandom RANDOM = new SecureRandom();

  private TestNegotiation() {}

  static KeySchedule run(AuthenticatedPeer peer, Role role, byte[] sessionId, int ownQpn) {
    try {
      DataOutputStream out = new DataOutputStream(peer.socket().getOutputStream());
      DataInputStream in = new DataInputStream(peer.socket().getInputStream());
      X25519KeyPair local = X25519KeyPair.generate(RANDOM);
      out.write(local.publicKey());
      out.writeInt(ownQpn);
      out.flush();
      byte[] peerPublic = new byte[X25519KeyPair.KEY_LENGTH];
      in.readFully(peerPublic);
      int peerQpn = in.readInt();
      KeySchedule ks =
          KeySchedule.builder()
              .role(role)
              .localKey(local)
              .peerPublicKey(peerPublic)
              .binding(peer.binding(role))
              .sessionId(sessionId)
              .initiatorQpn(role == Role.INITIATOR ? ownQpn : peerQpn)
              .responderQpn(role == Role.INITIATOR ? peerQpn : ownQpn)
              .establish();
      try {
        out.write(ks.current().confirmation());
        out.flush();
        byte[] confirmation = new byte[SessionKeys.CONFIRMATION_LENGTH];
        in.readFully(confirmation);
        ks.current().verifyPeerConfirmation(confirmation);
        return ks;
      } catch (IOException | RuntimeException e) {
        ks.close();
        throw e;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
