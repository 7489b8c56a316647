package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * {@link ForeignBinder}: names tried in order, C {@code int} and {@code long} arguments bound as
 * such, anything else and a missing symbol refused naming what was wrong. Needs downcalls (the
 * {@code java17-downcalls} and {@code java25-downcalls} profiles); without them it says why it
 * skips.
 */
class ForeignBinderTest {
  @Test
  void bindsIntAndLongArgumentsFromTheFirstLibraryThatOpens() throws Exception {
    ForeignBinder b = binderOrSkip("libsrdma-no-such-library.so.9", "crypto");
    MethodHandle ctrl = b.bind("EVP_CIPHER_CTX_ctrl", long.class, int.class, int.class, long.class);
    assertEquals(
        MethodType.methodType(int.class, long.class, int.class, int.class, long.class),
        ctrl.type());
    assertNotNull(b.bind("EVP_EncryptFinal_ex", long.class, long.class, long.class));
  }

  @Test
  void refusesAMissingSymbolAndOtherArgumentTypes() throws Exception {
    ForeignBinder b = binderOrSkip("crypto");
    IllegalArgumentException missing =
        assertThrows(IllegalArgumentException.class, () -> b.bind("srdma_no_such_function"));
    assertTrue(
        missing.getMessage().contains("has no symbol srdma_no_such_function"), missing.toString());
    assertThrows(IllegalArgumentException.class, () -> b.bind("EVP_EncryptFinal_ex", double.class));
  }

  @Test
  void saysWhyNoneWasTriedWhereTheJvmOffersNoneOrWhenJnrIsAskedFor() {
    String property = "srdma.test.binder.calls";
    if (!ForeignBinder.possibleHere()) {
      String why = new ForeignBinder(property).unavailable();
      assertTrue(why.contains("22+") || why.contains("--add-modules jdk.incubator.foreign"), why);
      return;
    }
    assertEquals(null, new ForeignBinder(property).unavailable());
    System.setProperty(property, "jnr");
    try {
      assertEquals("-D" + property + "=jnr", new ForeignBinder(property).unavailable());
    } finally {
      System.clearProperty(property);
    }
  }

  private static ForeignBinder binderOrSkip(String... names) {
    Assumptions.assumeTrue(
        ForeignBinder.possibleHere(),
        () -> "needs downcalls: " + new ForeignBinder("srdma.test.binder.calls").unavailable());
    ForeignBinder b = new ForeignBinder("srdma.test.binder.calls", names);
    try {
      b.bind("EVP_EncryptFinal_ex", long.class, long.class, long.class);
    } catch (IllegalArgumentException e) {
      Assumptions.abort("libcrypto does not open here: " + ForeignBinder.failed(e));
    }
    return b;
  }
}
