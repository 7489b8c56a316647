package io.srdma.bench.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class CpuModelTest {
  @Test
  void readsTheFirstProcessorsNameModelAndAesFeatures() {
    CpuModel m =
        CpuModel.parse(
            List.of(
                "processor\t: 0",
                "vendor_id\t: AuthenticAMD",
                "cpu family\t: 25",
                "model\t\t: 17",
                "model name\t: AMD EPYC",
                "flags\t\t: fpu sse2 aes avx2 avx512f vaes sha_ni",
                "",
                "processor\t: 1",
                "model name\t: Something Else"));
    assertEquals(new CpuModel("AMD EPYC", 25, 17, List.of("aes", "avx2", "vaes", "avx512f")), m);
    assertEquals("AMD EPYC, family 25 model 17: aes avx2 vaes avx512f", m.describe());
    assertEquals("unknown", CpuModel.parse(List.of("garbage", "model\t: x")).name());
    assertEquals("unknown", CpuModel.UNKNOWN.describe());
  }

  @Test
  void readsThisMachine() {
    CpuModel m = CpuModel.read();
    if (System.getProperty("os.name", "").startsWith("Linux")) {
      assertNotEquals(CpuModel.UNKNOWN, m, "/proc/cpuinfo gave nothing");
    }
  }
}
