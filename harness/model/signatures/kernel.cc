// The kernel's log (dmesg, journalctl -k): the NIC's link going down, the GPU driver's Xid errors. A job
// never prints these, but an operator's evidence directory holds them beside the ranks' logs, and they
// name the site outright. Evidence: they say what broke, not what noticed it.
#include "signature_family.h"

namespace ncclfi::harness {

extern const SignatureFamily kKernelFamily{
    .name = "kernel",
    .title = "The kernel's log: NIC links and GPU Xid errors",
    .software = "Linux (mlx5_core) and the NVIDIA driver (NVRM)",
    .lines =
        {{.id = "kernel.mlx5_link_down",
          .regex = R"(mlx5_core \S+ \S+: (?:Link down|Port: \d+ Link DOWN))",
          .must_contain = "mlx5_core",
          .shown = "`mlx5_core <pci> <netdev>: Link down`, `mlx5_core <pci> <ibdev>: Port: <n> Link DOWN`",
          .example = "[ 9021.512331] mlx5_core 0000:ab:00.0 ens8np0: Link down",
          .role = SignatureRole::kEvidence,
          .implies = "nic_link_down",
          .format = "Link down",
          .versions = "Linux 4.x to 6.x",
          .cited = "torvalds/linux drivers/net/ethernet/mellanox/mlx5/core/en_main.c (mlx5e_update_carrier); "
                   "the IB port state lines as in leptonai/gpud#1209 (`Port: 1 Link ACTIVE`)",
          .meaning = "the NIC lost its link: cable, transceiver, switch port, or the NIC itself",
          .site = "nic",
          .printed_by = "the kernel of the host whose NIC went down"},
         {.id = "kernel.mlx5_module_error",
          .regex = R"(mlx5_core \S+: Port module event\[error\]: module \d+, Cable error)",
          .must_contain = "Port module event[error]",
          .shown = "`mlx5_core <pci>: Port module event[error]: module <n>, Cable error, <why>`",
          .example = "[Thu Dec  3 14:02:11 2026] mlx5_core 0000:1b:00.0: Port module event[error]: module 0, "
                     "Cable error, Bad or shorted cable/module",
          .role = SignatureRole::kEvidence,
          .implies = "nic_link_down",
          .format = "Port module event[error]: module %u, %s, %s",
          .versions = "Linux 4.x to 6.x",
          .cited = "torvalds/linux drivers/net/ethernet/mellanox/mlx5/core/events.c (port_module_event; "
                   "mlx5_pme_status_to_string: Cable error; mlx5_pme_error_to_string)",
          .meaning = "the NIC's cable or transceiver module failed: its port loses the link",
          .site = "nic",
          .printed_by = "the kernel of the host whose NIC's module failed"},
         {.id = "kernel.pcie_bandwidth_limited",
          .regex = R"(available PCIe bandwidth, limited by \S+ GT/s PCIe x\d+ link)",
          .must_contain = "available PCIe bandwidth, limited by",
          .shown = "`pci <bdf>: <n> Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at <bdf> "
                   "(capable of ...)`",
          .example =
              "[Thu Dec  3 14:00:05 2026] pci 0000:cb:00.0: 63.012 Gb/s available PCIe bandwidth, "
              "limited by 8.0 GT/s PCIe x8 link at 0000:17:01.0 (capable of 504.112 Gb/s with 32.0 GT/s "
              "PCIe x16 link)",
          .role = SignatureRole::kEvidence,
          .implies = "pcie_downgraded",
          .format = "%u.%03u Gb/s available PCIe bandwidth, limited by %s x%d link at %s (capable of "
                    "%u.%03u Gb/s with %s x%d link)",
          .versions = "Linux 4.17 and newer",
          .cited = "torvalds/linux drivers/pci/pci.c (__pcie_print_link_status)",
          .meaning = "a device's PCIe link trained below what it can do, so its bandwidth is capped",
          .site = "pcie",
          .printed_by = "the kernel of the device's host, when it enumerates the device"},
         {.id = "kernel.aer_corrected_physical",
          .regex = R"(PCIe Bus Error: severity=Corrected, type=Physical Layer)",
          .must_contain = "PCIe Bus Error",
          .shown = "`PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)`",
          .example = "[Thu Dec  3 14:03:40 2026] nvidia 0000:cb:00.0: PCIe Bus Error: severity=Corrected, "
                     "type=Physical Layer, (Receiver ID)",
          .role = SignatureRole::kEvidence,
          .implies = "pcie_errors",
          .format = "PCIe Bus Error: severity=%s, type=%s, (%s)",
          .versions = "Linux 3.x to 6.x",
          .cited = "torvalds/linux drivers/pci/pcie/aer.c (aer_print_error)",
          .meaning = "the PCIe link of this device corrects physical-layer errors (bad lanes): often the "
                     "same link that trained down",
          .site = "pcie",
          .printed_by = "the kernel of the device's host"},
         {.id = "kernel.xid_nvlink",
          .regex = R"(NVRM: Xid \(PCI:[0-9A-Fa-f:.]+\): 74\b)",
          .must_contain = "NVRM: Xid",
          .shown = "`NVRM: Xid (PCI:<bus>): 74, ...` (an NVLink error)",
          .example = "[ 5123.000001] NVRM: Xid (PCI:0000:b7:00): 74, pid=4242, name=python3, NVLink: fatal "
                     "error detected on link 3",
          .role = SignatureRole::kEvidence,
          .implies = "gpu_xid",
          .format = "NVRM: Xid (PCI:%s): %d, %s",
          .versions = "NVIDIA drivers (Xid 74: NVLink errors)",
          .cited = "NVIDIA's Xid catalogue (docs.nvidia.com, Xid errors); the line's shape as users paste it",
          .meaning = "an NVLink of this GPU failed; kernels that used it fail with CUDA error 220",
          .site = "nvlink",
          .printed_by = "the kernel of the GPU's host"},
         {.id = "kernel.xid_fallen_off_bus",
          .regex = R"(NVRM: Xid \(PCI:[0-9A-Fa-f:.]+\): 79\b|NVRM: GPU \S+ has fallen off the bus)",
          .must_contain = "NVRM",
          .shown = "`NVRM: Xid (PCI:<bus>): 79, GPU has fallen off the bus.`",
          .example = "NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus",
          .role = SignatureRole::kEvidence,
          .implies = "gpu_xid",
          .format = "NVRM: Xid (PCI:%s): %d, %s",
          .versions = "NVIDIA drivers (Xid 79)",
          .cited = "NVIDIA's Xid catalogue (docs.nvidia.com, Xid errors)",
          .reported = "NVIDIA/NVSentinel#155",
          .meaning = "the GPU stopped answering on PCIe: power, heat, the slot or the link",
          .site = "pcie",
          .printed_by = "the kernel of the GPU's host"},
         {.id = "kernel.xid",
          .regex = R"(NVRM: Xid \(PCI:[0-9A-Fa-f:.]+\): \d+,)",
          .must_contain = "NVRM: Xid",
          .shown =
              "`NVRM: Xid (PCI:<bus>): <n>, ...` (any other Xid: 13, 31, 43 application faults, 48, 63, 64, "
              "94, 95 memory errors, 119, 120 GSP)",
          .example =
              "[24128.834365] NVRM: Xid (PCI:0000:01:00): 31, Ch 00000003, engmask 00000101, intr 10000000",
          .role = SignatureRole::kEvidence,
          .implies = "gpu_xid",
          .format = "NVRM: Xid (PCI:%s): %d, %s",
          .versions = "NVIDIA drivers",
          .cited = "NVIDIA's Xid catalogue (docs.nvidia.com, Xid errors)",
          .reported = "Bumblebee-Project/Bumblebee#677",
          .meaning = "the GPU driver reported an error of this GPU; the number says which",
          .site = "gpu_fault",
          .printed_by = "the kernel of the GPU's host"}},
    .hardware_record = true,
};

}  // namespace ncclfi::harness
