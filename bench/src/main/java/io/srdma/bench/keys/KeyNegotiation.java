package io.srdma.bench.keys;

import io.srdma.keys.AuthenticatedPeer;
import io.srdma.keys.KeySchedule;
import io.srdma.keys.Role;
import io.srdma.keys.SessionKeys;
import io.srdma.keys.X25519KeyPair;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.security.SecureRandom;

/**
 * The key negotiation the secure channel runs inside TLS, in its simplest framing: both sides send
 * their X25519 public key and QP number, derive the schedule, then send and check confirmations.
 */
final class KeyNegotiation {
  private KeyNegotiation() {}

  static KeySchedule run(AuthenticatedPeer peer, Role role, SecureRandom random, int ownQpn)
      throws IOException {
    DataOutputStream out = new DataOutputStream(peer.socket().getOutputStream());
    DataInputStream in = new DataInputStream(peer.socket().getInputStream());
    X25519KeyPair local = X25519KeyPair.generate(random);
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
            .sessionId(new byte[] {1, 2, 3, 4, 5, 6, 7, 8})
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
  }
}
