package io.srdma.channel.record;

import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidKeyException;
import java.security.Key;
import java.security.Provider;
import java.security.SecureRandom;
import java.security.spec.AlgorithmParameterSpec;
import javax.crypto.BadPaddingException;
import javax.crypto.Cipher;
import javax.crypto.CipherSpi;
import javax.crypto.IllegalBlockSizeException;
import javax.crypto.NoSuchPaddingException;
import javax.crypto.ShortBufferException;

/**
 * A JCE provider whose AES/GCM is the JDK's with one defect, to show that the known-answer test
 * refuses it: {@code corrupt} flips a bit of every sealed output; {@code unchecked} opens without
 * checking the tag; {@code slow} is correct but takes ten times as long per record until {@link
 * #slowUntilNanos} (a JDK whose GCM the compiler has not reached yet, for the rate check).
 */
final class FakeGcmProvider extends Provider {
  private static final long serialVersionUID = 1L;
  static volatile String defect = "corrupt";
  static volatile long slowUntilNanos = Long.MAX_VALUE;

  FakeGcmProvider() {
    super("FakeGcm", "1", "AES/GCM with a defect (tests)");
    put("Cipher.AES/GCM/NoPadding", Spi.class.getName());
  }

  /** An {@link AeadProvider} of this provider. */
  static AeadProvider aead(String defect) {
    FakeGcmProvider.defect = defect;
    return new AeadProvider("fake-" + defect, new FakeGcmProvider(), "fake");
  }

  /**
   * A stand-in for the JDK's provider (named {@link AeadProvider#JDK}) that runs ten times slower
   * than the JDK's GCM for {@code slowForNanos} from now ({@code Long.MAX_VALUE}: for ever).
   */
  static AeadProvider slowJdk(long slowForNanos) {
    FakeGcmProvider.defect = "slow";
    slowUntilNanos =
        slowForNanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + slowForNanos;
    return new AeadProvider(AeadProvider.JDK, new FakeGcmProvider(), "fake slow jdk");
  }

  /** The JDK's AES/GCM with {@link #defect}. */
  public static final class Spi extends CipherSpi {
    private final Cipher jdk;
    private final Cipher ctr;
    private int mode;
    private Key key;
    private AlgorithmParameterSpec params;

    /** A cipher. */
    public Spi() throws GeneralSecurityException {
      jdk = Cipher.getInstance("AES/GCM/NoPadding", "SunJCE");
      ctr = Cipher.getInstance("AES/CTR/NoPadding", "SunJCE");
    }

    @Override
    protected void engineSetMode(String m) throws java.security.NoSuchAlgorithmException {}

    @Override
    protected void engineSetPadding(String p) throws NoSuchPaddingException {}

    @Override
    protected int engineGetBlockSize() {
      return 16;
    }

    @Override
    protected int engineGetOutputSize(int inputLen) {
      return inputLen + 16;
    }

    @Override
    protected byte[] engineGetIV() {
      return jdk.getIV();
    }

    @Override
    protected AlgorithmParameters engineGetParameters() {
      return jdk.getParameters();
    }

    @Override
    protected void engineInit(int opmode, Key k, SecureRandom random) throws InvalidKeyException {
      throw new InvalidKeyException("parameters required");
    }

    @Override
    protected void engineInit(int opmode, Key k, AlgorithmParameterSpec p, SecureRandom random)
        throws InvalidKeyException, InvalidAlgorithmParameterException {
      mode = opmode;
      key = k;
      params = p;
      jdk.init(opmode, k, p, random);
    }

    @Override
    protected void engineInit(int opmode, Key k, AlgorithmParameters p, SecureRandom random)
        throws InvalidKeyException {
      throw new InvalidKeyException("spec required");
    }

    @Override
    protected byte[] engineUpdate(byte[] input, int offset, int len) {
      return jdk.update(input, offset, len);
    }

    @Override
    protected int engineUpdate(byte[] input, int offset, int len, byte[] out, int outOffset)
        throws ShortBufferException {
      return jdk.update(input, offset, len, out, outOffset);
    }

    @Override
    protected void engineUpdateAAD(byte[] src, int offset, int len) {
      jdk.updateAAD(src, offset, len);
    }

    @Override
    protected byte[] engineDoFinal(byte[] input, int offset, int len)
        throws IllegalBlockSizeException, BadPaddingException {
      byte[] out = new byte[len + 16];
      try {
        int n = engineDoFinal(input, offset, len, out, 0);
        return java.util.Arrays.copyOf(out, n);
      } catch (ShortBufferException e) {
        throw new IllegalStateException(e);
      }
    }

    @Override
    protected int engineDoFinal(byte[] input, int offset, int len, byte[] out, int outOffset)
        throws ShortBufferException, IllegalBlockSizeException, BadPaddingException {
      if (mode == Cipher.DECRYPT_MODE && "unchecked".equals(defect)) {
        // CTR from counter 2 is GCM's keystream: the plaintext, with no tag check at all
        byte[] iv = ((javax.crypto.spec.GCMParameterSpec) params).getIV();
        byte[] counter = java.util.Arrays.copyOf(iv, 16);
        counter[15] = 2;
        try {
          ctr.init(Cipher.ENCRYPT_MODE, key, new javax.crypto.spec.IvParameterSpec(counter));
          return ctr.doFinal(input, offset, len - 16, out, outOffset);
        } catch (GeneralSecurityException e) {
          throw new IllegalStateException(e);
        }
      }
      long t0 = System.nanoTime();
      int n = jdk.doFinal(input, offset, len, out, outOffset);
      long slowUntil = slowUntilNanos;
      if ("slow".equals(defect) && (slowUntil == Long.MAX_VALUE || t0 - slowUntil < 0)) {
        long until = t0 + 10 * (System.nanoTime() - t0);
        while (System.nanoTime() - until < 0) {
          Thread.onSpinWait();
        }
      }
      if (mode == Cipher.ENCRYPT_MODE && "corrupt".equals(defect)) {
        out[outOffset] ^= 1;
      }
      return n;
    }
  }
}
