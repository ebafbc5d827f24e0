// Hardware detection against fixture trees under tests/fixtures/hardware.
#include "rung/hardware.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "os/kernel_files.h"
#include "os/machine.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace {

fs::path fixture(const std::string& name) { return rung::test::fixtures_dir() / "hardware" / name; }

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << p;
}

// A temp copy of a fixture, removed when the test ends.
class TempTree {
 public:
  explicit TempTree(const std::string& from_fixture = {}) : dir_(rung::test::make_temp_dir("rung-hw")) {
    if (!from_fixture.empty()) fs::copy(fixture(from_fixture), dir_, fs::copy_options::recursive);
  }
  ~TempTree() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;
  const fs::path& path() const { return dir_; }

 private:
  fs::path dir_;
};

void write_pci(const fs::path& root, const std::string& address, const std::string& cls, const std::string& vendor,
               const std::string& device) {
  const fs::path d = root / "sys/bus/pci/devices" / address;
  write_file(d / "class", cls);
  write_file(d / "vendor", vendor);
  write_file(d / "device", device);
}

std::vector<std::string> addresses(const rung::Hardware& hw) {
  std::vector<std::string> out;
  for (const auto& g : hw.gpus) out.push_back(g.address);
  return out;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST(Hardware, NvidiaDesktop) {
  const auto hw = rung::detect_hardware(fixture("nvidia-desktop"));
  EXPECT_EQ(hw.os, rung::OsKind::kLinux);
  EXPECT_TRUE(hw.pci_visible);
  // The host bridge, the GPU's HDMI audio function and the NVMe controller are not GPUs.
  ASSERT_EQ(hw.gpus.size(), 1u);
  const auto& g = hw.gpus[0];
  EXPECT_EQ(g.address, "0000:01:00.0");
  EXPECT_EQ(g.class_code, 0x030000u);
  EXPECT_EQ(g.vendor_id, 0x10de);
  EXPECT_EQ(g.device_id, 0x2684);
  EXPECT_EQ(g.vendor, rung::Vendor::kNvidia);
  EXPECT_TRUE(hw.has_gpu(rung::Vendor::kNvidia));
  EXPECT_FALSE(hw.has_gpu(rung::Vendor::kAmd));
  EXPECT_FALSE(hw.has_gpu(rung::Vendor::kIntel));

  ASSERT_TRUE(hw.nvidia_driver.has_value());
  EXPECT_EQ(*hw.nvidia_driver, "550.54.14");
  EXPECT_EQ(hw.nvidia_device_nodes, (Strings{"/dev/nvidia0", "/dev/nvidiactl"}));
  EXPECT_FALSE(hw.rocm_kfd);
  EXPECT_EQ(hw.dri_render_nodes, (Strings{"/dev/dri/renderD128"}));  // card0 is not a render node

  EXPECT_EQ(hw.cpu.model, "AMD Ryzen 9 7950X 16-Core Processor");
  EXPECT_EQ(hw.cpu.logical_cpus, 4);
  EXPECT_EQ(hw.cpu.physical_cores, 2);
  EXPECT_TRUE(hw.cpu.has_flag("avx2"));
  EXPECT_TRUE(hw.cpu.has_flag("avx512f"));
  EXPECT_TRUE(hw.cpu.has_flag("avx512_vnni"));
  EXPECT_FALSE(hw.cpu.has_flag("avx512"));  // whole words only
  EXPECT_FALSE(hw.cpu.has_flag("asimd"));

  EXPECT_FALSE(hw.soc.has_value());
  EXPECT_FALSE(hw.hexagon_dsp);
  EXPECT_EQ(hw.identity(),
            "linux; gpu 10de:2684 NVIDIA; nvidia driver 550.54.14; cpu AMD Ryzen 9 7950X 16-Core Processor");
}

TEST(Hardware, AmdRocmDesktop) {
  const auto hw = rung::detect_hardware(fixture("amd-rocm-desktop"));
  EXPECT_EQ(hw.os, rung::OsKind::kLinux);
  EXPECT_TRUE(hw.pci_visible);
  ASSERT_EQ(hw.gpus.size(), 1u);  // the 0000:03:00.1 HDMI audio function (class 0x0403) is ignored
  EXPECT_EQ(hw.gpus[0].address, "0000:03:00.0");
  EXPECT_EQ(hw.gpus[0].vendor_id, 0x1002);
  EXPECT_EQ(hw.gpus[0].device_id, 0x744c);
  EXPECT_EQ(hw.gpus[0].vendor, rung::Vendor::kAmd);
  EXPECT_TRUE(hw.has_gpu(rung::Vendor::kAmd));
  EXPECT_FALSE(hw.has_gpu(rung::Vendor::kNvidia));

  EXPECT_FALSE(hw.nvidia_driver.has_value());
  EXPECT_TRUE(hw.nvidia_device_nodes.empty());
  EXPECT_TRUE(hw.rocm_kfd);
  EXPECT_EQ(hw.dri_render_nodes, (Strings{"/dev/dri/renderD128"}));

  EXPECT_EQ(hw.cpu.model, "AMD Ryzen Threadripper PRO 5975WX 32-Cores");
  EXPECT_EQ(hw.cpu.logical_cpus, 2);
  EXPECT_EQ(hw.cpu.physical_cores, 2);
  EXPECT_TRUE(hw.cpu.has_flag("avx2"));
  EXPECT_FALSE(hw.cpu.has_flag("avx512f"));

  EXPECT_FALSE(hw.soc.has_value());
  EXPECT_FALSE(hw.hexagon_dsp);
  EXPECT_EQ(hw.identity(), "linux; gpu 1002:744c AMD; kfd; cpu AMD Ryzen Threadripper PRO 5975WX 32-Cores");
}

TEST(Hardware, IntelLaptopWithNvidia) {
  const auto hw = rung::detect_hardware(fixture("intel-laptop-nvidia"));
  EXPECT_EQ(hw.os, rung::OsKind::kLinux);
  EXPECT_TRUE(hw.pci_visible);
  ASSERT_EQ(hw.gpus.size(), 2u);  // the host bridge is ignored; sorted by address
  EXPECT_EQ(addresses(hw), (Strings{"0000:00:02.0", "0000:01:00.0"}));
  EXPECT_EQ(hw.gpus[0].vendor, rung::Vendor::kIntel);
  EXPECT_EQ(hw.gpus[0].vendor_id, 0x8086);
  EXPECT_EQ(hw.gpus[0].device_id, 0xa7a0);
  EXPECT_EQ(hw.gpus[0].class_code, 0x030000u);
  EXPECT_EQ(hw.gpus[1].vendor, rung::Vendor::kNvidia);
  EXPECT_EQ(hw.gpus[1].vendor_id, 0x10de);
  EXPECT_EQ(hw.gpus[1].device_id, 0x25a2);
  EXPECT_EQ(hw.gpus[1].class_code, 0x030200u);  // 3D controller: a display-class function all the same
  EXPECT_TRUE(hw.has_gpu(rung::Vendor::kIntel));
  EXPECT_TRUE(hw.has_gpu(rung::Vendor::kNvidia));
  EXPECT_FALSE(hw.has_gpu(rung::Vendor::kAmd));

  // The open kernel module's line: "... Open Kernel Module for x86_64  535.183.01  Release Build ..."
  ASSERT_TRUE(hw.nvidia_driver.has_value());
  EXPECT_EQ(*hw.nvidia_driver, "535.183.01");
  EXPECT_EQ(hw.nvidia_device_nodes, (Strings{"/dev/nvidia0"}));
  EXPECT_FALSE(hw.rocm_kfd);
  EXPECT_EQ(hw.dri_render_nodes, (Strings{"/dev/dri/renderD128", "/dev/dri/renderD129"}));

  EXPECT_EQ(hw.cpu.model, "13th Gen Intel(R) Core(TM) i7-13700H");
  EXPECT_EQ(hw.cpu.logical_cpus, 4);
  EXPECT_EQ(hw.cpu.physical_cores, 3);  // one P-core with two threads, two E-cores
  EXPECT_TRUE(hw.cpu.has_flag("avx2"));
  EXPECT_TRUE(hw.cpu.has_flag("avx_vnni"));
  EXPECT_FALSE(hw.cpu.has_flag("avx512f"));

  EXPECT_FALSE(hw.soc.has_value());
  EXPECT_FALSE(hw.hexagon_dsp);
  EXPECT_EQ(hw.identity(),
            "linux; gpu 8086:a7a0 Intel; gpu 10de:25a2 NVIDIA; nvidia driver 535.183.01; "
            "cpu 13th Gen Intel(R) Core(TM) i7-13700H");
}

TEST(Hardware, QualcommTablet) {
  const auto hw = rung::detect_hardware(fixture("qualcomm-tablet"));
  EXPECT_EQ(hw.os, rung::OsKind::kAndroid);
  EXPECT_FALSE(hw.pci_visible);
  EXPECT_TRUE(hw.gpus.empty());
  EXPECT_FALSE(hw.has_gpu(rung::Vendor::kQualcomm));
  EXPECT_FALSE(hw.nvidia_driver.has_value());
  EXPECT_TRUE(hw.nvidia_device_nodes.empty());
  EXPECT_FALSE(hw.rocm_kfd);
  EXPECT_TRUE(hw.dri_render_nodes.empty());

  ASSERT_TRUE(hw.soc.has_value());
  EXPECT_EQ(hw.soc->vendor, "Qualcomm");  // inferred from the family: there is no soc0/vendor
  EXPECT_EQ(hw.soc->family, "Snapdragon");
  EXPECT_EQ(hw.soc->machine, "SM8635");
  EXPECT_EQ(hw.soc->soc_id, "614");
  EXPECT_TRUE(hw.hexagon_dsp);

  EXPECT_EQ(hw.cpu.model, "Qualcomm Technologies, Inc SM8635");  // the "Hardware" line
  EXPECT_EQ(hw.cpu.logical_cpus, 2);
  EXPECT_EQ(hw.cpu.physical_cores, 2);  // no physical id / core id: the logical count
  EXPECT_EQ(hw.cpu.fast_cores, 1) << "the X4 (capacity 1024), not the A520 (261)";
  EXPECT_EQ(rung::default_inference_threads(hw.cpu), 1);
  EXPECT_TRUE(hw.cpu.has_flag("asimd"));
  EXPECT_TRUE(hw.cpu.has_flag("i8mm"));
  EXPECT_TRUE(hw.cpu.has_flag("bf16"));
  EXPECT_FALSE(hw.cpu.has_flag("avx2"));

  EXPECT_EQ(hw.identity(), "android; soc Qualcomm SM8635 (614); hexagon; cpu Qualcomm Technologies, Inc SM8635");
}

// A Pi-class board: four Cortex-A72 cores, no PCI, no GPU ONNX Runtime uses, no SoC
// node; its kernel names the board in /proc/cpuinfo. It is also the /proc/cpuinfo the
// aarch64 build's tests see under qemu (tools/aarch64-run).
TEST(Hardware, RaspberryPi4) {
  const auto hw = rung::detect_hardware(fixture("raspberry-pi-4"));
  EXPECT_EQ(hw.os, rung::OsKind::kLinux);
  EXPECT_FALSE(hw.pci_visible);
  EXPECT_TRUE(hw.gpus.empty());
  EXPECT_FALSE(hw.soc.has_value());
  EXPECT_FALSE(hw.hexagon_dsp);
  EXPECT_EQ(hw.cpu.model, "Raspberry Pi 4 Model B Rev 1.4") << "the Model line names the board, over Hardware: BCM2835";
  EXPECT_EQ(hw.cpu.logical_cpus, 4);
  EXPECT_EQ(hw.cpu.physical_cores, 4);
  EXPECT_TRUE(hw.cpu.has_flag("asimd"));
  EXPECT_FALSE(hw.cpu.has_flag("asimddp"));
  EXPECT_EQ(hw.identity(), "linux; cpu Raspberry Pi 4 Model B Rev 1.4");
}

// A board with a Mali GPU: RK3588S (Orange Pi 5), four Cortex-A55 and four A76, Mali-G610 on
// the panthor driver, no PCI; the devicetree names the board.
TEST(Hardware, RockchipBoardWithMali) {
  const auto hw = rung::detect_hardware(fixture("rockchip-rk3588-mali"));
  EXPECT_EQ(hw.os, rung::OsKind::kLinux);
  EXPECT_TRUE(hw.gpus.empty());
  EXPECT_EQ(hw.dri_render_nodes, (Strings{"/dev/dri/renderD128"}));
  ASSERT_EQ(hw.soc_gpus.size(), 1u);
  EXPECT_EQ(hw.soc_gpus[0].node, "/dev/dri/renderD128");
  EXPECT_EQ(hw.soc_gpus[0].driver, "panthor");
  EXPECT_EQ(hw.soc_gpus[0].vendor, rung::Vendor::kArm);
  EXPECT_EQ(hw.board, "Xunlong Orange Pi 5") << "the devicetree's model, its NUL dropped";
  EXPECT_EQ(hw.cpu.logical_cpus, 8);
  EXPECT_EQ(hw.cpu.physical_cores, 8);
  EXPECT_EQ(hw.cpu.fast_cores, 4);
  EXPECT_EQ(hw.cpu.core_classes, "4 big + 4 LITTLE (cpu_capacity 1024, 414)");
  EXPECT_EQ(rung::default_inference_threads(hw.cpu), 4) << "the A76s, not physical cores minus two (6)";
  EXPECT_EQ(hw.identity(), "linux; gpu Arm (panthor); board Xunlong Orange Pi 5; cpu 4 x Cortex-A55 + 4 x Cortex-A76");
}

// Linux on a Qualcomm board (RB3 Gen 2, QCS6490): the Hexagon compute DSP, an Adreno GPU on the
// msm display driver, four A55 beside three A78 and a faster prime A78.
TEST(Hardware, QualcommLinuxBoard) {
  const auto hw = rung::detect_hardware(fixture("qualcomm-rb3-gen2"));
  EXPECT_EQ(hw.os, rung::OsKind::kLinux);
  ASSERT_TRUE(hw.soc.has_value());
  EXPECT_EQ(hw.soc->vendor, "Qualcomm");
  EXPECT_EQ(hw.soc->machine, "QCS6490");
  EXPECT_TRUE(hw.hexagon_dsp);
  ASSERT_EQ(hw.soc_gpus.size(), 1u);
  EXPECT_EQ(hw.soc_gpus[0].driver, "msm_dpu");
  EXPECT_EQ(hw.soc_gpus[0].vendor, rung::Vendor::kQualcomm);
  EXPECT_EQ(hw.cpu.fast_cores, 4) << "the prime core and the three A78 below it (892 of 1024) are all big";
  EXPECT_EQ(hw.cpu.core_classes, "4 big + 4 LITTLE (cpu_capacity 1024, 892, 372)");
  EXPECT_EQ(rung::default_inference_threads(hw.cpu), 4);
  EXPECT_EQ(hw.cpu.model, "4 x Cortex-A55 + 4 x Cortex-A78") << "the kernel names no model: the cores by their part numbers";
}

TEST(Hardware, IntelHybridCountsItsPCoresFromThePmuLists) {
  const auto hw = rung::detect_hardware(fixture("intel-laptop-nvidia"));
  EXPECT_EQ(hw.cpu.fast_cores, 1) << "cpu_core lists CPUs 0-1: two threads of one P-core";
  EXPECT_EQ(hw.cpu.core_classes, "1 P-core + 2 E-cores (sys/devices/cpu_core and cpu_atom)");
  EXPECT_TRUE(hw.soc_gpus.empty()) << "render nodes with no sysfs device are not SoC GPUs";
}

TEST(Hardware, CoreClassesAtTheirBoundaries) {
  auto classes = [](const std::vector<std::pair<const char*, std::string>>& per_cpu, const char* file) {
    TempTree t;
    write_file(t.path() / "proc/cpuinfo", "processor\t: 0\n\nprocessor\t: 1\n\nprocessor\t: 2\n");
    for (std::size_t c = 0; c < per_cpu.size(); ++c)
      write_file(t.path() / "sys/devices/system/cpu" / per_cpu[c].first / file, per_cpu[c].second);
    return rung::detect_hardware(t.path()).cpu;
  };
  // Half the largest capacity is still big; one below it is LITTLE.
  EXPECT_EQ(classes({{"cpu0", "512\n"}, {"cpu1", "1024\n"}}, "cpu_capacity").fast_cores, 0);
  EXPECT_EQ(classes({{"cpu0", "511\n"}, {"cpu1", "1024\n"}}, "cpu_capacity").fast_cores, 1);
  // Capacities that part nothing (every core 1024) or are missing on a core say nothing: the
  // cpufreq maxima decide. Each alone, and equal maxima beside them: one class.
  auto mixed = [](std::vector<const char*> capacity, std::vector<const char*> max_freq) {
    TempTree t;
    write_file(t.path() / "proc/cpuinfo", "processor\t: 0\n\nprocessor\t: 1\n\nprocessor\t: 2\n");
    for (std::size_t c = 0; c < 3; ++c) {
      const fs::path dir = t.path() / "sys/devices/system/cpu" / ("cpu" + std::to_string(c));
      fs::create_directories(dir);  // the core is there, whichever of its files are not
      if (capacity[c] != nullptr) write_file(dir / "cpu_capacity", capacity[c]);
      if (max_freq[c] != nullptr) write_file(dir / "cpufreq/cpuinfo_max_freq", max_freq[c]);
    }
    return rung::detect_hardware(t.path()).cpu;
  };
  const auto equal = mixed({"1024\n", "1024\n", "1024\n"}, {"1000000\n", "2000000\n", "2000000\n"});
  EXPECT_EQ(equal.fast_cores, 2);
  EXPECT_EQ(equal.core_classes, "2 big + 1 LITTLE (cpufreq maxima in MHz 2000, 1000)");
  EXPECT_EQ(mixed({"1024\n", "1024\n", "1024\n"}, {"2000000\n", "2000000\n", "2000000\n"}).fast_cores, 0);
  // Capacities on two of three cores that would part them (1024 beside 400) are not read as classes.
  const auto partial = mixed({"400\n", "1024\n", nullptr}, {"2000000\n", "2000000\n", "2000000\n"});
  EXPECT_EQ(partial.fast_cores, 0) << partial.core_classes;
  const auto partial_by_freq = mixed({"400\n", "1024\n", nullptr}, {"1000000\n", "2000000\n", "2000000\n"});
  EXPECT_EQ(partial_by_freq.core_classes, "2 big + 1 LITTLE (cpufreq maxima in MHz 2000, 1000)");
  // A maximum missing on one core classes nothing either.
  EXPECT_EQ(mixed({nullptr, nullptr, nullptr}, {"1000000\n", "2000000\n", nullptr}).fast_cores, 0);
  // Capacities that do part the cores are the scheduler's word, whatever the frequencies.
  const auto by_capacity = mixed({"400\n", "1024\n", "1024\n"}, {"2000000\n", "2000000\n", "2000000\n"});
  EXPECT_EQ(by_capacity.core_classes, "2 big + 1 LITTLE (cpu_capacity 1024, 400)");
  // Without capacities, a maximum within 15% of the highest is big.
  EXPECT_EQ(classes({{"cpu0", "1700000\n"}, {"cpu1", "2000000\n"}}, "cpufreq/cpuinfo_max_freq").fast_cores, 0);
  const auto by_freq = classes({{"cpu0", "1699000\n"}, {"cpu1", "2000000\n"}, {"cpu2", "2000000\n"}}, "cpufreq/cpuinfo_max_freq");
  EXPECT_EQ(by_freq.fast_cores, 2);
  EXPECT_EQ(by_freq.core_classes, "2 big + 1 LITTLE (cpufreq maxima in MHz 2000, 1699)");
  // Unreadable values are no values: one CPU left says nothing.
  EXPECT_EQ(classes({{"cpu0", "fast\n"}, {"cpu1", "1024\n"}}, "cpu_capacity").fast_cores, 0);
  EXPECT_EQ(classes({{"cpu0", "-5\n"}, {"cpu1", "1024\n"}}, "cpu_capacity").fast_cores, 0);
  EXPECT_EQ(classes({{"cpu0", "99999999999999999999999\n"}, {"cpu1", "1024\n"}}, "cpu_capacity").fast_cores, 0);
  // A directory that is not cpuN is not a CPU.
  EXPECT_EQ(classes({{"cpufreq", "10\n"}, {"cpu1", "1024\n"}}, "cpu_capacity").fast_cores, 0);
}

// Two ARM boards whose capacities do not part the cores: one whose device tree gives none
// (the kernel says 1024 for all eight), one whose big cores have no cpu_capacity file.
TEST(Hardware, ArmCoresWhoseCapacitiesPartNothingAreClassedByTheirCpufreqMaxima) {
  const auto equal = rung::detect_hardware(fixture("arm-equal-capacity"));
  EXPECT_EQ(equal.cpu.fast_cores, 4);
  EXPECT_EQ(equal.cpu.core_classes, "4 big + 4 LITTLE (cpufreq maxima in MHz 2400, 1800)");
  const auto partial = rung::detect_hardware(fixture("arm-partial-capacity"));
  EXPECT_EQ(partial.cpu.fast_cores, 2);
  EXPECT_EQ(partial.cpu.core_classes, "2 big + 6 LITTLE (cpufreq maxima in MHz 2600, 2000)");
}

// The raw layer under detect_hardware (os/kernel_files.h): what it lists and
// what it leaves for core/hardware.cpp to judge, one part at a time.
TEST(KernelFiles, ListsWhatTheKernelPublishesAndLeavesTheMeaningToTheCaller) {
  TempTree t;
  for (const char* cpu : {"cpu10", "cpu2", "cpu0"}) write_file(t.path() / "sys/devices/system/cpu" / cpu / "cpu_capacity", " 512\n");
  write_file(t.path() / "sys/devices/system/cpu/cpu2/cpufreq/cpuinfo_max_freq", "1800000\n");
  write_file(t.path() / "sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq", "1\n");  // not a CPU
  write_file(t.path() / "sys/devices/system/cpu/cpuidle/current_driver", "none\n");         // nor this
  write_file(t.path() / "sys/devices/system/cpu/cpu3x/cpu_capacity", "1\n");               // nor this
  write_file(t.path() / "dev/nvidia0", "");
  write_file(t.path() / "dev/nvidia-caps/nvidia-cap1", "");  // a directory named nvidia*: not a node
  write_file(t.path() / "dev/dri/renderD129", "");
  write_file(t.path() / "dev/dri/renderD128", "");
  write_file(t.path() / "dev/dri/card0", "");
  write_file(t.path() / "sys/class/drm/renderD128/device/uevent", "DRIVER=panfrost\n");
  write_file(t.path() / "dev/mali0", "");
  write_file(t.path() / "sys/devices/soc0/family", "  Snapdragon \n");
  const auto k = rung::read_kernel_files(t.path());
  ASSERT_TRUE(k.cpus.has_value());
  ASSERT_EQ(k.cpus->size(), 3u);
  EXPECT_EQ((*k.cpus)[0].number, 0);
  EXPECT_EQ((*k.cpus)[1].number, 2) << "by number, not by name: cpu10 after cpu2";
  EXPECT_EQ((*k.cpus)[2].number, 10);
  EXPECT_EQ((*k.cpus)[0].capacity, " 512\n") << "the text as the kernel wrote it";
  EXPECT_FALSE((*k.cpus)[0].max_khz.has_value());
  EXPECT_EQ((*k.cpus)[1].max_khz, "1800000\n");
  EXPECT_EQ(k.nvidia_nodes, Strings{rung::device_node("nvidia0")});
  ASSERT_EQ(k.render_nodes.size(), 2u);
  EXPECT_EQ(k.render_nodes[0].node, rung::device_node("dri/renderD128"));
  EXPECT_EQ(k.render_nodes[0].uevent, "DRIVER=panfrost\n");
  EXPECT_FALSE(k.render_nodes[1].uevent.has_value()) << "renderD129 has no sysfs device";
  ASSERT_EQ(k.soc_gpu_nodes.size(), 1u);
  EXPECT_EQ(k.soc_gpu_nodes[0].second, "mali");
  ASSERT_TRUE(k.soc.has_value());
  EXPECT_EQ(k.soc->at("family"), "Snapdragon");
  EXPECT_EQ(k.soc->count("vendor"), 0u) << "a file that is not there is absent, not empty";
  // What is not there at all is absent: no bus, no cpuinfo, no soc, no Android.
  EXPECT_FALSE(k.pci.has_value());
  EXPECT_FALSE(k.cpuinfo.has_value());
  EXPECT_FALSE(k.android);
  EXPECT_FALSE(k.kfd);
  EXPECT_FALSE(k.hexagon_dsp);
  EXPECT_FALSE(rung::read_kernel_files(t.path() / "nothing").soc.has_value());
}

TEST(Hardware, HybridPmuListsMustBothParse) {
  auto fast = [](const std::string& p, const std::string& e) {
    TempTree t;
    write_file(t.path() / "proc/cpuinfo", "processor\t: 0\n\nprocessor\t: 1\n\nprocessor\t: 2\n\nprocessor\t: 3\n");
    write_file(t.path() / "sys/devices/cpu_core/cpus", p);
    write_file(t.path() / "sys/devices/cpu_atom/cpus", e);
    return rung::detect_hardware(t.path()).cpu.fast_cores;
  };
  EXPECT_EQ(fast("0-2\n", "3\n"), 3);
  EXPECT_EQ(fast("0,2\n", "1,3\n"), 2);
  EXPECT_EQ(fast("0-2\n", "\n"), 0) << "no E-cores: one class";
  EXPECT_EQ(fast("2-0\n", "3\n"), 0);
  EXPECT_EQ(fast("0-x\n", "3\n"), 0);
  EXPECT_EQ(fast("0-99999999\n", "3\n"), 0) << "a range no CPU has is refused, not walked";
}

TEST(Hardware, InferenceThreadsOnAUniformCpu) {
  rung::CpuInfo cpu;
  cpu.physical_cores = 16;
  EXPECT_EQ(rung::default_inference_threads(cpu), 14);
  EXPECT_EQ(rung::inference_threads_reason(cpu), "14 threads: the 16 physical cores less two, at least one");
  cpu.physical_cores = 3;
  EXPECT_EQ(rung::default_inference_threads(cpu), 1);
  cpu.physical_cores = 2;
  EXPECT_EQ(rung::default_inference_threads(cpu), 1);
  cpu.physical_cores = 0;
  EXPECT_EQ(rung::default_inference_threads(cpu), 1);
  EXPECT_EQ(rung::inference_threads_reason(cpu), "1 thread: the 0 physical cores less two, at least one");
  cpu.fast_cores = 2;
  cpu.core_classes = "2 big + 6 LITTLE (cpu_capacity 1024, 300)";
  EXPECT_EQ(rung::inference_threads_reason(cpu), "2 threads: the fast cores of 2 big + 6 LITTLE (cpu_capacity 1024, 300)");
}

TEST(Hardware, SocGpusFromTheirDrivers) {
  TempTree t;
  write_file(t.path() / "proc/cpuinfo", "processor\t: 0\n");
  for (const char* n : {"renderD128", "renderD129", "renderD130", "renderD131"}) write_file(t.path() / "dev/dri" / n, "");
  write_file(t.path() / "sys/class/drm/renderD128/device/uevent", "DRIVER=panfrost\nOF_NAME=gpu\n");
  write_file(t.path() / "sys/class/drm/renderD129/device/uevent", "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:03:00.0\n");
  write_file(t.path() / "sys/class/drm/renderD130/device/uevent", "DRIVER=v3d\n");
  write_file(t.path() / "sys/class/drm/renderD131/device/uevent", "OF_NAME=gpu\n");
  write_file(t.path() / "dev/mali0", "");
  const auto hw = rung::detect_hardware(t.path());
  std::vector<std::string> seen;
  for (const auto& g : hw.soc_gpus) seen.push_back(g.node + " " + g.driver + " " + rung::vendor_name(g.vendor));
  EXPECT_EQ(seen, (Strings{"/dev/dri/renderD128 panfrost Arm", "/dev/dri/renderD130 v3d unknown",
                           "/dev/dri/renderD131  unknown", "/dev/mali0 mali Arm"}))
      << "a PCI function's render node is the PCI list's";
  EXPECT_NE(hw.identity().find("gpu unknown (no driver named)"), std::string::npos) << hw.identity();
}

TEST(Hardware, BoardNameIsPrintable) {
  TempTree t;
  write_file(t.path() / "sys/firmware/devicetree/base/model", std::string("Board\x1b[31m\nX\0tail", 18));
  EXPECT_EQ(rung::detect_hardware(t.path()).board, "Board [31m X");
}

TEST(Hardware, CpuOnlyVm) {
  const auto hw = rung::detect_hardware(fixture("cpu-vm"));
  EXPECT_EQ(hw.os, rung::OsKind::kLinux);
  EXPECT_TRUE(hw.pci_visible);
  EXPECT_TRUE(hw.gpus.empty());  // virtio net, virtio block and a host bridge
  for (auto v : {rung::Vendor::kUnknown, rung::Vendor::kNvidia, rung::Vendor::kAmd, rung::Vendor::kIntel,
                 rung::Vendor::kQualcomm, rung::Vendor::kApple})
    EXPECT_FALSE(hw.has_gpu(v)) << rung::vendor_name(v);
  EXPECT_FALSE(hw.nvidia_driver.has_value());
  EXPECT_TRUE(hw.nvidia_device_nodes.empty());
  EXPECT_FALSE(hw.rocm_kfd);
  EXPECT_TRUE(hw.dri_render_nodes.empty());
  EXPECT_FALSE(hw.soc.has_value());
  EXPECT_FALSE(hw.hexagon_dsp);

  EXPECT_EQ(hw.cpu.model, "AMD EPYC 7B13");
  EXPECT_EQ(hw.cpu.logical_cpus, 2);
  EXPECT_EQ(hw.cpu.physical_cores, 1);  // both vCPUs are threads of core 0
  EXPECT_TRUE(hw.cpu.has_flag("avx2"));
  EXPECT_TRUE(hw.cpu.has_flag("hypervisor"));
  EXPECT_EQ(hw.identity(), "linux; cpu AMD EPYC 7B13");
}

TEST(Hardware, NonexistentRootIsEmpty) {
  const auto hw = rung::detect_hardware(fixture("no-such-machine"));
  EXPECT_EQ(hw.os, rung::OsKind::kLinux);
  EXPECT_FALSE(hw.pci_visible);
  EXPECT_TRUE(hw.gpus.empty());
  EXPECT_FALSE(hw.nvidia_driver.has_value());
  EXPECT_TRUE(hw.nvidia_device_nodes.empty());
  EXPECT_FALSE(hw.rocm_kfd);
  EXPECT_TRUE(hw.dri_render_nodes.empty());
  EXPECT_TRUE(hw.cpu.model.empty());
  EXPECT_TRUE(hw.cpu.flags.empty());
  EXPECT_EQ(hw.cpu.logical_cpus, 0);
  EXPECT_EQ(hw.cpu.physical_cores, 0);
  EXPECT_FALSE(hw.soc.has_value());
  EXPECT_FALSE(hw.hexagon_dsp);
  EXPECT_EQ(hw.identity(), "linux");
}

TEST(Hardware, EmptyPciDirectoryIsVisible) {
  TempTree t;
  fs::create_directories(t.path() / "sys/bus/pci/devices");
  const auto hw = rung::detect_hardware(t.path());
  EXPECT_TRUE(hw.pci_visible);
  EXPECT_TRUE(hw.gpus.empty());
}

TEST(Hardware, MalformedPciFilesAreSkipped) {
  TempTree t;
  const fs::path root = t.path();
  write_pci(root, "0000:01:00.0", "garbage\n", "0x10de\n", "0x2684\n");
  write_pci(root, "0000:02:00.0", "0x\n", "0x10de\n", "0x2684\n");
  write_pci(root, "0000:03:00.0", "0x0300001234\n", "0x10de\n", "0x2684\n");  // too many digits
  write_pci(root, "0000:04:00.0", "0x030000\n", "0x1234567\n", "0x2684\n");   // vendor over 16 bits
  write_pci(root, "0000:05:00.0", "0x030000\n", "\n", "0x2684\n");
  write_pci(root, "0000:06:00.0", "", "", "");
  fs::create_directories(root / "sys/bus/pci/devices/0000:07:00.0");  // no files at all
  write_file(root / "sys/bus/pci/devices/stray-file", "not a device\n");
  fs::create_directories(root / "sys/bus/pci/devices/0000:08:00.0/class");  // a directory where a file belongs
  write_file(root / "sys/bus/pci/devices/0000:08:00.0/vendor", "0x10de\n");
  write_file(root / "sys/bus/pci/devices/0000:08:00.0/device", "0x2684\n");
  // The one sound device, written without the 0x prefix or a newline, and a processing accelerator.
  write_pci(root, "0000:0a:00.0", "0x120000\n", "0x1002\n", "0x74a1\n");
  write_pci(root, "0000:09:00.0", "030000", "10de", "2684");

  const auto hw = rung::detect_hardware(root);
  EXPECT_TRUE(hw.pci_visible);
  ASSERT_EQ(addresses(hw), (Strings{"0000:09:00.0", "0000:0a:00.0"}));
  EXPECT_EQ(hw.gpus[0].vendor, rung::Vendor::kNvidia);
  EXPECT_EQ(hw.gpus[0].device_id, 0x2684);
  EXPECT_EQ(hw.gpus[1].class_code, 0x120000u);
  EXPECT_EQ(hw.gpus[1].vendor, rung::Vendor::kAmd);
  EXPECT_EQ(hw.identity(), "linux; gpu 10de:2684 NVIDIA; gpu 1002:74a1 AMD");
}

TEST(Hardware, VendorIds) {
  TempTree t;
  write_pci(t.path(), "0000:00:01.0", "0x030000", "0x5143", "0x0001");
  write_pci(t.path(), "0000:00:02.0", "0x120000", "0x17cb", "0x0002");
  write_pci(t.path(), "0000:00:03.0", "0x030000", "0x106b", "0x0003");
  write_pci(t.path(), "0000:00:04.0", "0x030000", "0x1af4", "0x1050");  // virtio-gpu
  const auto hw = rung::detect_hardware(t.path());
  ASSERT_EQ(hw.gpus.size(), 4u);
  EXPECT_EQ(hw.gpus[0].vendor, rung::Vendor::kQualcomm);
  EXPECT_EQ(hw.gpus[1].vendor, rung::Vendor::kQualcomm);
  EXPECT_EQ(hw.gpus[2].vendor, rung::Vendor::kApple);
  EXPECT_EQ(hw.gpus[3].vendor, rung::Vendor::kUnknown);
  EXPECT_TRUE(hw.has_gpu(rung::Vendor::kUnknown));
  EXPECT_EQ(hw.identity(),
            "linux; gpu 5143:0001 Qualcomm; gpu 17cb:0002 Qualcomm; gpu 106b:0003 Apple; gpu 1af4:1050 unknown");
}

TEST(Hardware, IdentityChangesWithDriverVersion) {
  const auto before = rung::detect_hardware(fixture("nvidia-desktop"));
  TempTree t("nvidia-desktop");
  EXPECT_EQ(rung::detect_hardware(t.path()).identity(), before.identity());  // the copy reads the same
  write_file(t.path() / "proc/driver/nvidia/version",
             "NVRM version: NVIDIA UNIX x86_64 Kernel Module  555.42.02  Tue May 14 21:18:07 UTC 2024\n"
             "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
  const auto after = rung::detect_hardware(t.path());
  ASSERT_TRUE(after.nvidia_driver.has_value());
  EXPECT_EQ(*after.nvidia_driver, "555.42.02");
  EXPECT_NE(after.identity(), before.identity());
  EXPECT_EQ(after.identity(),
            "linux; gpu 10de:2684 NVIDIA; nvidia driver 555.42.02; cpu AMD Ryzen 9 7950X 16-Core Processor");

  // A version file without an NVRM line is no driver version at all.
  write_file(t.path() / "proc/driver/nvidia/version", "something else\n");
  const auto unparsable = rung::detect_hardware(t.path());
  EXPECT_FALSE(unparsable.nvidia_driver.has_value());
  EXPECT_EQ(unparsable.identity(), "linux; gpu 10de:2684 NVIDIA; cpu AMD Ryzen 9 7950X 16-Core Processor");
}

TEST(Hardware, IdentityIsDeterministic) {
  for (const char* name : {"nvidia-desktop", "amd-rocm-desktop", "intel-laptop-nvidia", "qualcomm-tablet", "raspberry-pi-4",
                           "rockchip-rk3588-mali", "qualcomm-rb3-gen2", "cpu-vm"}) {
    const auto a = rung::detect_hardware(fixture(name));
    const auto b = rung::detect_hardware(fixture(name));
    EXPECT_EQ(a.identity(), b.identity()) << name;
    EXPECT_EQ(a.identity().find('\n'), std::string::npos) << name;
  }
}

TEST(Hardware, IdentityChangesWithANewCard) {
  TempTree t("nvidia-desktop");
  const auto before = rung::detect_hardware(t.path()).identity();
  write_pci(t.path(), "0000:05:00.0", "0x030000\n", "0x10de\n", "0x2204\n");
  const auto hw = rung::detect_hardware(t.path());
  EXPECT_EQ(addresses(hw), (Strings{"0000:01:00.0", "0000:05:00.0"}));
  EXPECT_NE(hw.identity(), before);
}

TEST(Hardware, ArmCpuWithoutHardwareLine) {
  TempTree t;
  write_file(t.path() / "proc/cpuinfo",
             "processor\t: 0\n"
             "BogoMIPS\t: 38.40\n"
             "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics\n"
             "CPU implementer\t: 0x41\n"
             "CPU architecture: 8\n"
             "CPU variant\t: 0x0\n"
             "CPU part\t: 0xd82\n"
             "CPU revision\t: 1\n"
             "\n");
  const auto hw = rung::detect_hardware(t.path());
  EXPECT_EQ(hw.cpu.model, "1 x Cortex-X4");
  EXPECT_EQ(hw.cpu.logical_cpus, 1);
  EXPECT_EQ(hw.cpu.physical_cores, 1);
  EXPECT_TRUE(hw.cpu.has_flag("atomics"));
  EXPECT_EQ(hw.identity(), "linux; cpu 1 x Cortex-X4");
  // A part the table does not know, or another implementer's: the numbers themselves.
  for (const auto& [implementer, part] : {std::pair{"0x41", "0xfff"}, std::pair{"0x51", "0xd05"}}) {
    write_file(t.path() / "proc/cpuinfo", fmt::format("processor\t: 0\nCPU implementer\t: {}\nCPU part\t: 0xd05\n\n"
                                                       "processor\t: 1\nCPU implementer\t: {}\nCPU part\t: {}\n",
                                                       implementer, implementer, part));
    EXPECT_EQ(rung::detect_hardware(t.path()).cpu.model, fmt::format("ARM implementer {} part 0xd05", implementer));
  }
}

TEST(Hardware, CpuinfoWithCrlfAndMultipleSockets) {
  TempTree t;
  std::string text;
  for (int socket = 0; socket < 2; ++socket)
    for (int core = 0; core < 2; ++core)
      text += "processor\t: " + std::to_string(socket * 2 + core) + "\r\nmodel name\t: Intel(R) Xeon(R)  \r\n" +
              "physical id\t: " + std::to_string(socket) + "\r\ncore id\t\t: " + std::to_string(core) +
              "\r\nflags\t\t: sse4_2 avx2\r\n\r\n";
  write_file(t.path() / "proc/cpuinfo", text);
  const auto hw = rung::detect_hardware(t.path());
  EXPECT_EQ(hw.cpu.model, "Intel(R) Xeon(R)");
  EXPECT_EQ(hw.cpu.logical_cpus, 4);
  EXPECT_EQ(hw.cpu.physical_cores, 4);  // core ids repeat across sockets
  EXPECT_EQ(hw.cpu.flags, (Strings{"sse4_2", "avx2"}));
}

TEST(Hardware, SocVendorFileWinsAndDspAlternative) {
  TempTree t;
  write_file(t.path() / "sys/devices/soc0/vendor", "Qualcomm Inc\n");
  write_file(t.path() / "sys/devices/soc0/family", "Snapdragon\n");
  write_file(t.path() / "sys/devices/soc0/machine", "SM8650\n");
  write_file(t.path() / "sys/devices/soc0/soc_id", "557\n");
  write_file(t.path() / "dev/adsprpc-smd", "");
  const auto hw = rung::detect_hardware(t.path());
  EXPECT_EQ(hw.os, rung::OsKind::kLinux);  // no build.prop
  ASSERT_TRUE(hw.soc.has_value());
  EXPECT_EQ(hw.soc->vendor, "Qualcomm Inc");
  EXPECT_TRUE(hw.hexagon_dsp);
  EXPECT_EQ(hw.identity(), "linux; soc Qualcomm Inc SM8650 (557); hexagon");

  // A non-Qualcomm SoC: nothing inferred.
  TempTree u;
  write_file(u.path() / "sys/devices/soc0/family", "jep106:0070\n");
  const auto other = rung::detect_hardware(u.path());
  ASSERT_TRUE(other.soc.has_value());
  EXPECT_EQ(other.soc->vendor, "");
  EXPECT_FALSE(other.hexagon_dsp);
  EXPECT_EQ(other.identity(), "linux; soc jep106:0070");
}

TEST(Hardware, Names) {
  EXPECT_STREQ(rung::vendor_name(rung::Vendor::kNvidia), "NVIDIA");
  EXPECT_STREQ(rung::vendor_name(rung::Vendor::kAmd), "AMD");
  EXPECT_STREQ(rung::vendor_name(rung::Vendor::kIntel), "Intel");
  EXPECT_STREQ(rung::vendor_name(rung::Vendor::kQualcomm), "Qualcomm");
  EXPECT_STREQ(rung::vendor_name(rung::Vendor::kApple), "Apple");
  EXPECT_STREQ(rung::vendor_name(rung::Vendor::kArm), "Arm");
  EXPECT_STREQ(rung::vendor_name(rung::Vendor::kUnknown), "unknown");
  EXPECT_STREQ(rung::os_name(rung::OsKind::kLinux), "linux");
  EXPECT_STREQ(rung::os_name(rung::OsKind::kAndroid), "android");
  EXPECT_STREQ(rung::os_name(rung::OsKind::kMacos), "macos");
  EXPECT_STREQ(rung::os_name(rung::OsKind::kWindows), "windows");
}

TEST(Hardware, ThisMachineDoesNotThrow) {
  rung::Hardware hw;
  ASSERT_NO_THROW(hw = rung::detect_hardware());
  EXPECT_FALSE(hw.identity().empty());
#if defined(__linux__)
  EXPECT_GE(hw.cpu.logical_cpus, 1);
  EXPECT_GE(hw.cpu.physical_cores, 1);
#endif
}

// The features that decide a quantised form's speed, each fixture alone and each flag at its boundary.
TEST(QuantisedSpeedFeatures, NamedPerArchitectureFromTheFlags) {
  auto line = [](const std::string& name) {
    return rung::quantised_speed_line(rung::quantised_speed_features(rung::detect_hardware(fixture(name)).cpu));
  };
  EXPECT_EQ(line("cpu-vm"), "AVX2 · no AVX-512 · no VNNI · no AMX");
  EXPECT_EQ(line("intel-laptop-nvidia"), "AVX2 · no AVX-512 · VNNI · no AMX") << "AVX-VNNI alone counts as VNNI";
  EXPECT_EQ(line("nvidia-desktop"), "AVX2 · AVX-512 · VNNI · no AMX");
  EXPECT_EQ(line("qualcomm-tablet"), "dot-product · i8mm");
  EXPECT_EQ(line("raspberry-pi-4"), "no dot-product · no i8mm") << "Cortex-A72: Armv8.0, neither";

  rung::CpuInfo cpu;
  EXPECT_TRUE(rung::quantised_speed_features(cpu).empty());
  EXPECT_EQ(rung::quantised_speed_line({}), "unknown (no CPU flags read)");
  cpu.flags = {"fpu", "sse2", "avx512f", "amx_int8"};
  EXPECT_EQ(rung::quantised_speed_line(rung::quantised_speed_features(cpu)), "no AVX2 · AVX-512 · no VNNI · AMX");
  cpu.flags = {"fp", "asimd"};
  EXPECT_EQ(rung::quantised_speed_line(rung::quantised_speed_features(cpu)), "no dot-product · no i8mm");
  cpu.flags = {"sse2", "avx512_vnni"};
  EXPECT_TRUE(rung::quantised_speed_features(cpu)[2].present) << "AVX512_VNNI counts as VNNI";
}

// Windows devices: windows.json at the root holds what DXGI and the processor calls report.
TEST(WindowsHardware, ALaptopsAdaptersAreItsGpusButTheSoftwareOne) {
  auto hw = rung::detect_hardware(fixture("windows-nvidia-laptop"));
  EXPECT_EQ(hw.os, rung::OsKind::kWindows);
  ASSERT_EQ(hw.adapters.size(), 3u);
  EXPECT_EQ(hw.adapters[1].name, "NVIDIA GeForce RTX 4060 Laptop GPU");
  EXPECT_EQ(hw.adapters[1].vendor, rung::Vendor::kNvidia);
  EXPECT_EQ(hw.adapters[1].dedicated_memory_mb, 7948u);
  EXPECT_TRUE(hw.adapters[2].software);
  EXPECT_EQ(addresses(hw), (Strings{"dxgi:0", "dxgi:1"}));
  EXPECT_TRUE(hw.has_gpu(rung::Vendor::kIntel));
  EXPECT_TRUE(hw.has_gpu(rung::Vendor::kNvidia));
  EXPECT_EQ(hw.gpus[1].device_id, 0x28a0);
  EXPECT_EQ(hw.cpu.model, "13th Gen Intel(R) Core(TM) i7-13700H");
  EXPECT_EQ(hw.cpu.physical_cores, 14);
  EXPECT_EQ(hw.cpu.logical_cpus, 20);
  // The P-cores are the higher efficiency class: the inference pool is theirs.
  EXPECT_EQ(hw.cpu.fast_cores, 6);
  EXPECT_EQ(hw.cpu.core_classes, "6 + 8 cores (EfficiencyClass 1 and 0)");
  EXPECT_EQ(rung::default_inference_threads(hw.cpu), 6);
  EXPECT_TRUE(hw.cpu.has_flag("avx_vnni"));
  EXPECT_TRUE(hw.unreadable.empty());
  EXPECT_EQ(hw.identity(), "windows; gpu 8086:a7a0 Intel; gpu 10de:28a0 NVIDIA; cpu 13th Gen Intel(R) Core(TM) i7-13700H");
  // Nothing of Linux is read beside it.
  EXPECT_FALSE(hw.nvidia_driver.has_value());
  EXPECT_TRUE(hw.dri_render_nodes.empty());
}

TEST(WindowsHardware, OnlyTheBasicRenderDriverIsNoGpu) {
  auto hw = rung::detect_hardware(fixture("windows-no-gpu"));
  EXPECT_EQ(hw.os, rung::OsKind::kWindows);
  EXPECT_EQ(hw.adapters.size(), 1u);
  EXPECT_TRUE(hw.gpus.empty());
  EXPECT_EQ(hw.cpu.fast_cores, 0);  // one efficiency class said: a uniform CPU
  EXPECT_EQ(rung::default_inference_threads(hw.cpu), 1);
}

TEST(WindowsHardware, MicrosoftsAdapterIsSoftwareWhateverItsFlagSays) {
  TempTree t;
  write_file(t.path() / "windows.json",
             R"({"dxgi_adapters": [{"name": "Microsoft Basic Render Driver", "vendor_id": "1414", "device_id": "8c"},
                                   {"name": "Some GPU", "vendor_id": "0x1ed5", "device_id": "0001", "software": false}]})");
  auto hw = rung::detect_hardware(t.path());
  ASSERT_EQ(hw.adapters.size(), 2u);
  EXPECT_TRUE(hw.adapters[0].software);
  EXPECT_FALSE(hw.adapters[1].software);
  EXPECT_EQ(addresses(hw), (Strings{"dxgi:1"}));
  EXPECT_EQ(hw.gpus[0].vendor, rung::Vendor::kUnknown);
  EXPECT_TRUE(hw.unreadable.empty()) << hw.unreadable.front();
}

TEST(WindowsHardware, EfficiencyClassesAtTheirBoundaries) {
  for (const auto& [classes, fast] : std::vector<std::pair<std::string, int>>{
           {R"({"0": 8})", 0}, {R"({"1": 6, "0": 8})", 6}, {R"({"0": 8, "1": 6})", 6}, {R"({"2": 2, "1": 4, "0": 4})", 2}}) {
    TempTree t;
    write_file(t.path() / "windows.json",
               R"({"dxgi_adapters": [], "cpu": {"cores": 14, "logical_processors": 20, "cores_by_efficiency_class": )" + classes + "}}");
    auto hw = rung::detect_hardware(t.path());
    EXPECT_EQ(hw.cpu.fast_cores, fast) << classes;
    EXPECT_TRUE(hw.unreadable.empty()) << classes;
  }
}

TEST(WindowsHardware, ADamagedDescriptionIsSaidNotSilentlyEmpty) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "not valid JSON"},
      {R"({"cpu": {}})", "dxgi_adapters"},
      {R"({"dxgi_adapters": [{"name": "x", "vendor_id": "10de0", "device_id": "1"}]})", "vendor_id '10de0' is not 1 to 4 hex digits"},
      {R"({"dxgi_adapters": [{"name": "x", "vendor_id": "10de", "device_id": "zz"}]})", "device_id 'zz'"},
      {R"({"dxgi_adapters": [{"vendor_id": "10de", "device_id": "1"}]})", "name"},
      {R"({"dxgi_adapters": [{"name": "x", "vendor_id": "10de", "device_id": "1", "dedicated_memory_mb": -1}]})", "dedicated_memory_mb"},
      {R"({"dxgi_adapters": [{"name": "x", "vendor_id": "10de", "device_id": "1", "colour": "green"}]})", "colour"},
      {R"({"dxgi_adapters": [], "cpu": {"cores": 0}})", "cores"},
      {R"({"dxgi_adapters": [], "cpu": {"cores_by_efficiency_class": {"fast": 6}}})", "'fast' is not a class"},
      {R"({"dxgi_adapters": [], "cpu": {"cores_by_efficiency_class": {"1": 0}}})", "'1' is not a class"},
      {R"({"dxgi_adapters": [], "extra": 1})", "extra"},
  };
  for (const auto& [text, said] : cases) {
    TempTree t;
    write_file(t.path() / "windows.json", text);
    auto hw = rung::detect_hardware(t.path());
    EXPECT_EQ(hw.os, rung::OsKind::kWindows) << text;
    ASSERT_EQ(hw.unreadable.size(), 1u) << text;
    EXPECT_NE(hw.unreadable[0].find(said), std::string::npos) << text << " -> " << hw.unreadable[0];
    EXPECT_NE(hw.unreadable[0].find("windows.json"), std::string::npos) << hw.unreadable[0];
  }
  // One bad adapter among good ones: the good ones are kept.
  TempTree t;
  write_file(t.path() / "windows.json",
             R"({"dxgi_adapters": [{"name": "a", "vendor_id": "10de", "device_id": "1"}, {"name": "b", "vendor_id": "?", "device_id": "2"}]})");
  auto hw = rung::detect_hardware(t.path());
  EXPECT_EQ(addresses(hw), (Strings{"dxgi:0"}));
  EXPECT_EQ(hw.unreadable.size(), 1u);
}

TEST(WindowsHardware, AdaptersDxgiCouldNotListAreSaidSo) {
  TempTree t;
  write_file(t.path() / "windows.json",
             R"J({"dxgi_adapters": [], "dxgi_problem": "CreateDXGIFactory1 failed (HRESULT 0x887a0004)", "cpu": {"cores": 4, "logical_processors": 8}})J");
  auto hw = rung::detect_hardware(t.path());
  EXPECT_EQ(hw.os, rung::OsKind::kWindows);
  EXPECT_TRUE(hw.gpus.empty());
  EXPECT_EQ(hw.cpu.physical_cores, 4);
  ASSERT_EQ(hw.unreadable.size(), 1u);
  EXPECT_NE(hw.unreadable[0].find("no adapter listed: CreateDXGIFactory1 failed (HRESULT 0x887a0004)"), std::string::npos) << hw.unreadable[0];
}

TEST(WindowsHardware, ThisLinuxMachineHasNoNativeDescription) {
  // Linux's facts are files: "/" is read as a tree, never as a Windows description.
  auto hw = rung::detect_hardware("/");
  EXPECT_NE(hw.os, rung::OsKind::kWindows);
  EXPECT_TRUE(hw.adapters.empty());
}
