package io.srdma.bench.transport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The CPU a bench ran on, from {@code /proc/cpuinfo}: its name, family and model, and the features
 * that decide AES-GCM's speed (a VM's CPU is often named only "AMD EPYC", and the same name covers
 * parts with and without AVX-512). Linux only; elsewhere {@link #read()} gives {@link #UNKNOWN}.
 *
 * @param name the model name, or "unknown"
 * @param family the CPU family, or -1
 * @param model the model number, or -1
 * @param features of {@link #NOTED}, those this CPU has, in that order
 */
public record CpuModel(String name, int family, int model, List<String> features) {
  /** The features reported: the ones AES-GCM implementations choose their code path by. */
  public static final List<String> NOTED =
      List.of("aes", "pclmulqdq", "avx2", "vaes", "vpclmulqdq", "avx512f", "avx512vl");

  /** What is reported where /proc/cpuinfo cannot be read. */
  public static final CpuModel UNKNOWN = new CpuModel("unknown", -1, -1, List.of());

  /** The first CPU of /proc/cpuinfo, or {@link #UNKNOWN}. */
  public static CpuModel read() {
    try {
      return parse(Files.readAllLines(Path.of("/proc/cpuinfo")));
    } catch (IOException | RuntimeException e) {
      return UNKNOWN;
    }
  }

  /** The first processor's entry of {@code /proc/cpuinfo} lines. */
  static CpuModel parse(List<String> lines) {
    String name = "unknown";
    int family = -1;
    int model = -1;
    Set<String> flags = Set.of();
    int processors = 0;
    for (String line : lines) {
      int colon = line.indexOf(':');
      if (colon < 0) {
        continue;
      }
      String key = line.substring(0, colon).strip();
      String value = line.substring(colon + 1).strip();
      switch (key) {
        case "processor" -> processors++;
        case "model name" -> name = value;
        case "cpu family" -> family = number(value);
        case "model" -> model = number(value);
        case "flags" -> flags = Set.of(value.split("\\s+"));
        default -> {}
      }
      if (processors > 1) {
        break; // the first processor's entry is enough
      }
    }
    List<String> features = new ArrayList<>();
    for (String f : NOTED) {
      if (flags.contains(f)) {
        features.add(f);
      }
    }
    return new CpuModel(name, family, model, List.copyOf(features));
  }

  private static int number(String v) {
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** "AMD EPYC, family 25 model 17: aes avx2 vaes avx512f ...". */
  public String describe() {
    return name
        + (family < 0 ? "" : ", family " + family + " model " + model)
        + (features.isEmpty() ? "" : ": " + String.join(" ", features));
  }
}
