package io.srdma.keys;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.CRLException;
import java.security.cert.CertificateException;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x509.AlgorithmIdentifier;
import org.bouncycastle.cert.X509CRLHolder;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CRLConverter;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.PKCS8Generator;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.openssl.jcajce.JceOpenSSLPKCS8DecryptorProviderBuilder;
import org.bouncycastle.openssl.jcajce.JceOpenSSLPKCS8EncryptorBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.pkcs.PKCS8EncryptedPrivateKeyInfo;
import org.bouncycastle.pkcs.PKCSException;

/**
 * PEM encoding of certificates, CRLs and private keys (PKCS#8, optionally passphrase-encrypted with
 * PBES2: PBKDF2-HMAC-SHA256 and AES-256-CBC). Files written with {@link #writePrivateKey(Path,
 * PrivateKey, char[])} are created owner-only (POSIX 600) and never overwrite an existing file;
 * {@link #readPrivateKey(Path, char[])} refuses a key file that is not.
 */
public final class Pem {
  /** PBKDF2 iterations for passphrase-encrypted keys (OWASP 2023 figure for HMAC-SHA256). */
  static final int PBKDF2_ITERATIONS = 600_000;

  /**
   * Largest PEM file read: 64 MiB, room for a revocation list of about a million entries; a larger
   * file (or a device such as /dev/zero) is refused rather than read into memory.
   */
  static final int MAX_PEM_BYTES = 64 << 20;

  private Pem() {}

  /** PEM text of one certificate. */
  public static String toPem(X509Certificate certificate) {
    return write(certificate);
  }

  /** PEM text of a CRL. */
  public static String toPem(X509CRL crl) {
    return write(crl);
  }

  /**
   * PEM text of a private key as PKCS#8, encrypted if a passphrase is given.
   *
   * @param passphrase {@code null} or empty for an unencrypted key
   */
  public static String toPem(PrivateKey key, char[] passphrase) {
    try {
      if (passphrase == null || passphrase.length == 0) {
        return write(new JcaPKCS8Generator(key, null));
      }
      JceOpenSSLPKCS8EncryptorBuilder builder =
          new JceOpenSSLPKCS8EncryptorBuilder(PKCS8Generator.AES_256_CBC)
              .setProvider(Providers.BC)
              .setRandom(new SecureRandom())
              .setPRF(new AlgorithmIdentifier(PKCSObjectIdentifiers.id_hmacWithSHA256))
              .setIterationCount(PBKDF2_ITERATIONS)
              .setPassword(passphrase);
      return write(new JcaPKCS8Generator(key, builder.build()));
    } catch (IOException | OperatorCreationException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CRYPTO_FAILURE, "cannot encode private key", e);
    }
  }

  /** Writes a certificate to a new file (fails if it exists). */
  public static void writeCertificate(Path file, X509Certificate certificate) {
    SecureFiles.writeNew(file, toPem(certificate).getBytes(StandardCharsets.US_ASCII), false);
  }

  /**
   * Writes a private key to a new owner-only file (fails if it exists).
   *
   * @param passphrase {@code null} or empty for an unencrypted key
   */
  public static void writePrivateKey(Path file, PrivateKey key, char[] passphrase) {
    SecureFiles.writeNew(file, toPem(key, passphrase).getBytes(StandardCharsets.US_ASCII), true);
  }

  /** Reads the first certificate of a PEM file. */
  public static X509Certificate readCertificate(Path file) {
    List<X509Certificate> all = readCertificates(file);
    if (all.isEmpty()) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_PEM, file + " holds no certificate");
    }
    return all.get(0);
  }

  /** Reads all certificates of a PEM file, in order. */
  public static List<X509Certificate> readCertificates(Path file) {
    List<X509Certificate> out = new ArrayList<>();
    JcaX509CertificateConverter converter = new JcaX509CertificateConverter();
    for (Object o : parseAll(file)) {
      if (o instanceof X509CertificateHolder holder) {
        try {
          out.add(converter.getCertificate(holder));
        } catch (CertificateException e) {
          throw new KeyExchangeException(
              KeyExchangeException.Reason.BAD_PEM, file + " holds a malformed certificate", e);
        }
      }
    }
    return out;
  }

  /** Reads the CRL of a PEM file. */
  public static X509CRL readCrl(Path file) {
    for (Object o : parseAll(file)) {
      if (o instanceof X509CRLHolder holder) {
        try {
          return new JcaX509CRLConverter().getCRL(holder);
        } catch (CRLException e) {
          throw new KeyExchangeException(
              KeyExchangeException.Reason.BAD_PEM, file + " holds a malformed CRL", e);
        }
      }
    }
    throw new KeyExchangeException(KeyExchangeException.Reason.BAD_PEM, file + " holds no CRL");
  }

  /**
   * Reads a private key (PKCS#8, encrypted PKCS#8, or a traditional OpenSSL EC key) from a file
   * only its owner may access (POSIX {@code 600} or narrower), owned by this process's user or
   * root, in a directory no other user can write ({@link OwnerOnlyFiles#strictModes}), encrypted or
   * not.
   *
   * @param passphrase needed if the key is encrypted; may be {@code null} otherwise
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#KEY_FILE_EXPOSED}, naming the
   *     file and its mode, if group or others may access it; {@link
   *     KeyExchangeException.Reason#KEY_FILE_NOT_OWNED} if it is owned by a user other than this
   *     process's and root; {@link KeyExchangeException.Reason#KEY_DIRECTORY_EXPOSED}, naming the
   *     directory, if another user can replace it there ({@link OwnerOnlyFiles#strictModes}).
   *     Nothing is read then
   */
  public static PrivateKey readPrivateKey(Path file, char[] passphrase) {
    // a FIFO or a device is refused before anything else; the file read is the one judged (opened
    // first and checked after: another file, or a FIFO, swapped in after the checks is refused)
    BasicFileAttributes judged = regularKeyFile(file);
    requireOwnerOnly(file);
    JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
    for (Object o : parseAll(file, judged)) {
      try {
        if (o instanceof PrivateKeyInfo info) {
          return converter.getPrivateKey(info);
        }
        if (o instanceof PEMKeyPair pair) {
          return converter.getPrivateKey(pair.getPrivateKeyInfo());
        }
        if (o instanceof PKCS8EncryptedPrivateKeyInfo encrypted) {
          if (passphrase == null || passphrase.length == 0) {
            throw new KeyExchangeException(
                KeyExchangeException.Reason.BAD_PASSPHRASE,
                file + " is encrypted and no passphrase was given");
          }
          PrivateKeyInfo info =
              encrypted.decryptPrivateKeyInfo(
                  new JceOpenSSLPKCS8DecryptorProviderBuilder()
                      .setProvider(Providers.BC)
                      .build(passphrase));
          return converter.getPrivateKey(info);
        }
      } catch (PKCSException e) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.BAD_PASSPHRASE, "cannot decrypt " + file, e);
      } catch (OperatorCreationException | IOException e) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.BAD_PEM, file + " holds a malformed private key", e);
      }
    }
    throw new KeyExchangeException(
        KeyExchangeException.Reason.BAD_PEM, file + " holds no private key");
  }

  private static BasicFileAttributes regularKeyFile(Path file) {
    try {
      return CheckedOpen.regular(file, BoundedFileOpen.Links.FOLLOW, false);
    } catch (java.nio.file.NoSuchFileException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, file + " does not exist", e);
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "cannot read " + file + ": " + e.getMessage(), e);
    }
  }

  private static void requireOwnerOnly(Path file) {
    java.util.Optional<OwnerOnlyFiles.Finding> finding;
    try {
      finding = OwnerOnlyFiles.strictModes(file);
    } catch (java.nio.file.NoSuchFileException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, file + " does not exist", e);
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "cannot read " + file + ": " + e.getMessage(), e);
    }
    if (finding.isEmpty()) {
      return;
    }
    OwnerOnlyFiles.Finding f = finding.get();
    switch (f.problem()) {
      case MODE ->
          throw new KeyExchangeException(
              KeyExchangeException.Reason.KEY_FILE_EXPOSED,
              "private key "
                  + file
                  + " is open to group or others ("
                  + f.detail()
                  + "); chmod 600 it (and replace the key if others may have read it)");
      case OWNER ->
          throw new KeyExchangeException(
              KeyExchangeException.Reason.KEY_FILE_NOT_OWNED,
              "private key "
                  + file
                  + " is owned by "
                  + f.detail()
                  + ", neither this process's user nor root, who could replace it; chown it to"
                  + " the user that runs srdma");
      case DIRECTORY ->
          throw new KeyExchangeException(
              KeyExchangeException.Reason.KEY_DIRECTORY_EXPOSED,
              "private key "
                  + file
                  + " is in directory "
                  + f.path()
                  + " ("
                  + f.detail()
                  + "), where users other than this process's user and root can replace it;"
                  + " chmod go-w it and chown it to the user that runs srdma, or move the key");
    }
  }

  private static List<Object> parseAll(Path file) {
    return parseAll(file, null);
  }

  /** Parses the file {@code judged} describes (null: whatever regular file is there). */
  private static List<Object> parseAll(Path file, BasicFileAttributes judged) {
    String text =
        new String(
            SecureFiles.read(file, MAX_PEM_BYTES, BoundedFileOpen.Links.FOLLOW, judged),
            StandardCharsets.US_ASCII);
    List<Object> out = new ArrayList<>();
    try (PEMParser parser = new PEMParser(new StringReader(text))) {
      for (Object o = parser.readObject(); o != null; o = parser.readObject()) {
        out.add(o);
      }
    } catch (IOException | RuntimeException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_PEM, file + " is not valid PEM", e);
    } catch (StackOverflowError e) {
      // Bouncy Castle parses nested ASN.1 recursively: a few hundred KB of nested SEQUENCEs in a
      // CERTIFICATE or X509 CRL block overflow the stack. The error unwinds the parser only (no
      // lock held, nothing shared written), so it is a refused file, not a dead thread or command
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_PEM, file + " is not valid PEM (it nests too deeply)");
    }
    return out;
  }

  private static String write(Object o) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(out)) {
      w.writeObject(o);
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CRYPTO_FAILURE, "cannot encode PEM", e);
    }
    return out.toString();
  }

  /** Wraps a JCA failure; used where only a provider bug can fail. */
  static KeyExchangeException internal(String what, GeneralSecurityException e) {
    return new KeyExchangeException(KeyExchangeException.Reason.CRYPTO_FAILURE, what, e);
  }
}
