package io.srdma.keys;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Locale;
import java.util.Objects;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * Hands one credential to the JDK's TLS: the key manager of {@link MutualTls}'s contexts.
 *
 * <p>It replaces an in-memory PKCS12 key store under {@code SunX509}, which wrapped and unwrapped
 * the private key with PBKDF2-HmacSHA256 (10,000 iterations) for every context: most of a client's
 * connect time (docs/performance.md, "Session 9: set-up profile"). The choice of alias follows
 * {@code SunX509}'s: the key's algorithm must be the one asked for ({@code EC}, or {@code EC_EC}
 * where the part after {@code _} names the issuer's signature algorithm), and where the peer names
 * acceptable issuers, one certificate of the chain must be issued by one of them.
 *
 * <p>Thread safety: immutable; the JDK calls it from any handshake thread.
 */
final class CredentialKeyManager extends X509ExtendedKeyManager {
  static final String ALIAS = "srdma";

  private final PrivateKey key;
  private final X509Certificate[] chain;

  /**
   * @param chain the credential's certificate first, then its issuers
   */
  CredentialKeyManager(PrivateKey key, X509Certificate... chain) {
    this.key = Objects.requireNonNull(key, "key");
    if (chain.length == 0) {
      throw new IllegalArgumentException("empty certificate chain");
    }
    this.chain = chain.clone();
  }

  /**
   * Whether this credential answers a request for {@code keyType} from a peer trusting {@code
   * issuers}.
   */
  boolean matches(String keyType, Principal[] issuers) {
    if (keyType == null) {
      return false;
    }
    String keyAlgorithm = keyType;
    String signatureAlgorithm = null;
    int sep = keyType.indexOf('_');
    if (sep >= 0) {
      keyAlgorithm = keyType.substring(0, sep);
      signatureAlgorithm = keyType.substring(sep + 1);
    }
    if (!keyAlgorithm.equalsIgnoreCase(key.getAlgorithm())) {
      return false;
    }
    if (signatureAlgorithm != null
        && !chain[0]
            .getSigAlgName()
            .toUpperCase(Locale.ROOT)
            .contains("WITH" + signatureAlgorithm.toUpperCase(Locale.ROOT))) {
      return false;
    }
    return issuedByOneOf(issuers);
  }

  private boolean issuedByOneOf(Principal[] issuers) {
    if (issuers == null || issuers.length == 0) {
      return true;
    }
    for (X509Certificate c : chain) {
      for (Principal p : issuers) {
        if (p != null && c.getIssuerX500Principal().equals(p)) {
          return true;
        }
      }
    }
    return false;
  }

  private String[] aliases(String keyType, Principal[] issuers) {
    return matches(keyType, issuers) ? new String[] {ALIAS} : null;
  }

  private String choose(String[] keyTypes, Principal[] issuers) {
    if (keyTypes != null) {
      for (String t : keyTypes) {
        if (matches(t, issuers)) {
          return ALIAS;
        }
      }
    }
    return null;
  }

  @Override
  public String[] getClientAliases(String keyType, Principal[] issuers) {
    return aliases(keyType, issuers);
  }

  @Override
  public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
    return choose(keyType, issuers);
  }

  @Override
  public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
    return choose(keyType, issuers);
  }

  @Override
  public String[] getServerAliases(String keyType, Principal[] issuers) {
    return aliases(keyType, issuers);
  }

  @Override
  public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
    return matches(keyType, issuers) ? ALIAS : null;
  }

  @Override
  public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
    return matches(keyType, issuers) ? ALIAS : null;
  }

  @Override
  public X509Certificate[] getCertificateChain(String alias) {
    return ALIAS.equals(alias) ? chain.clone() : null;
  }

  @Override
  public PrivateKey getPrivateKey(String alias) {
    return ALIAS.equals(alias) ? key : null;
  }

  @Override
  public String toString() {
    return "CredentialKeyManager[" + chain[0].getSubjectX500Principal().getName() + "]";
  }
}
