# xdma_0: the PCIe bridge of the U250 board top. DMA/Bridge Subsystem for PCI
# Express (PG195; bridge mode: PG194) in AXI Bridge mode, endpoint, Gen3 x16,
# 512-bit AXI at 250 MHz. Lanes, GT quad and PERST# come from the board part's
# interfaces (pci_express_x16, pcie_perstn: GTY quad 227); the 100 MHz reference
# clock enters through an IBUFDS_GTE4 in the board top.
#   BAR0      64-bit, 4 KiB, non-prefetchable: farnn_core's registers, through
#             the AXI4 bridge master m_axib_* (offset 0 of the AXI space).
#   s_axib_*  the core's host master: AXI addresses are PCIe addresses (one
#             AXI BAR over the whole 64-bit space, no translation), so the core
#             reaches host memory at the IOVAs VFIO maps and GPU memory at its
#             bus addresses.
#   MSI       2 vectors for usr_irq_req[1:0] (0 completion, 1 error); no legacy
#             INTx, no MSI-X (the driver takes MSI when MSI-X is absent).
# IDs: vendor 10EE with device ID FA00 (not in the Xilinx XDMA driver's ID
# table, so that driver never claims the card), class 1200 (processing
# accelerator). Runs inside fpga/common/vivado/create_project.tcl.
create_ip -name xdma -vendor xilinx.com -library ip -module_name xdma_0

set_property -dict [list \
    CONFIG.functional_mode             {AXI_Bridge} \
    CONFIG.mode_selection              {Advanced} \
    CONFIG.device_port_type            {PCI_Express_Endpoint_device} \
    CONFIG.PCIE_BOARD_INTERFACE        {pci_express_x16} \
    CONFIG.SYS_RST_N_BOARD_INTERFACE   {pcie_perstn} \
    CONFIG.pl_link_cap_max_link_width  {X16} \
    CONFIG.pl_link_cap_max_link_speed  {8.0_GT/s} \
    CONFIG.ref_clk_freq                {100_MHz} \
    CONFIG.axi_data_width              {512_bit} \
    CONFIG.axisten_freq                {250} \
    CONFIG.axi_addr_width              {64} \
    CONFIG.axi_id_width                {4} \
    CONFIG.vendor_id                   {10EE} \
    CONFIG.pf0_device_id               {FA00} \
    CONFIG.pf0_base_class_menu         {Processing_accelerators} \
    CONFIG.pf0_sub_class_interface_menu {Unknown} \
    CONFIG.pf0_class_code_base         {12} \
    CONFIG.pf0_class_code_sub          {00} \
    CONFIG.pf0_class_code_interface    {00} \
    CONFIG.pf0_class_code              {120000} \
    CONFIG.pf0_bar0_64bit              {true} \
    CONFIG.pf0_bar0_scale              {Kilobytes} \
    CONFIG.pf0_bar0_size               {4} \
    CONFIG.pciebar2axibar_0            {0x0000000000000000} \
    CONFIG.en_axi_slave_if             {true} \
    CONFIG.axibar_num                  {1} \
    CONFIG.axibar_0                    {0x0000000000000000} \
    CONFIG.axibar_highaddr_0           {0xFFFFFFFFFFFFFFFF} \
    CONFIG.axibar2pciebar_0            {0x0000000000000000} \
    CONFIG.xdma_axilite_slave          {false} \
    CONFIG.xdma_num_usr_irq            {2} \
    CONFIG.pf0_interrupt_pin           {NONE} \
    CONFIG.pf0_msi_enabled             {true} \
    CONFIG.pf0_msi_cap_multimsgcap     {2_vectors} \
    CONFIG.pf0_msix_enabled            {false} \
] [get_ips xdma_0]
