package io.srdma.channel.record;

import java.lang.invoke.MethodHandle;

/**
 * libgcrypt's per-record cipher calls bound as foreign-function downcalls (Java 22+'s {@code
 * java.lang.foreign} with {@code Linker.Option.critical}, or Java 17's {@code
 * jdk.incubator.foreign} trivial calls): the calls are short, never block and never call back, so
 * they run without a thread-state transition, where jnr-ffi's JNI stubs take one per call — eight
 * calls per 64 B record sealed and opened. Every argument is an address, a size or a handle passed
 * as a {@code long} (LP64), the result the {@code int} gcry_error_t, so each handle is of a
 * primitive type that this class, compiled for Java 17, calls with {@code invokeExact}; the
 * foreign-function API itself is reached by reflection ({@link ForeignBinder}), once, when the
 * class initialises.
 *
 * <p>Bound where the JVM offers downcalls (Java 22+, or Java 17 started with {@code --add-modules
 * jdk.incubator.foreign --enable-native-access=ALL-UNNAMED}) unless {@value #PROPERTY}{@code =jnr};
 * otherwise {@link #unavailable()} says why and libgcrypt is called through jnr-ffi. Used only once
 * {@link LibGcrypt} loaded the same library and checked its version (this class never refers to
 * that one, so their initialisations cannot wait on each other). Which binding is in use is part of
 * the provider's version string ({@code srdma doctor}, {@code srdma bench}, the start-up log).
 * Immutable and thread-safe.
 */
final class GcryptDowncalls {
  /** System property: {@code jnr} keeps libgcrypt on jnr-ffi where downcalls work too. */
  static final String PROPERTY = "srdma.gcrypt.calls";

  /** {@link LibGcrypt#NAMES}, in its order (not read from there: see above). */
  static final String[] NAMES = {"libgcrypt.so.20", "gcrypt"};

  private static final String UNAVAILABLE;
  static final MethodHandle SETIV;
  static final MethodHandle AUTHENTICATE;
  static final MethodHandle ENCRYPT;
  static final MethodHandle DECRYPT;
  static final MethodHandle GETTAG;
  static final MethodHandle CHECKTAG;

  static {
    MethodHandle[] h = new MethodHandle[6];
    // LibGcrypt's names in its order, so dlopen finds the library jnr-ffi loaded (the same
    // mapping); that one's version was checked there, and only then are these calls used
    ForeignBinder b = new ForeignBinder(PROPERTY, NAMES);
    String why = b.unavailable();
    if (why == null) {
      try {
        Class<?> l = long.class;
        h[0] = b.bind("gcry_cipher_setiv", l, l, l);
        h[1] = b.bind("gcry_cipher_authenticate", l, l, l);
        h[2] = b.bind("gcry_cipher_encrypt", l, l, l, l, l);
        h[3] = b.bind("gcry_cipher_decrypt", l, l, l, l, l);
        h[4] = b.bind("gcry_cipher_gettag", l, l, l);
        h[5] = b.bind("gcry_cipher_checktag", l, l, l);
      } catch (RuntimeException | LinkageError e) {
        why = ForeignBinder.failed(e);
        h = new MethodHandle[6];
      }
    }
    UNAVAILABLE = why;
    SETIV = h[0];
    AUTHENTICATE = h[1];
    ENCRYPT = h[2];
    DECRYPT = h[3];
    GETTAG = h[4];
    CHECKTAG = h[5];
  }

  private GcryptDowncalls() {}

  /** Why the downcalls are not bound, or null when they are. */
  static String unavailable() {
    return UNAVAILABLE;
  }
}
