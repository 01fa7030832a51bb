# fpga/common/vivado.mk: the Vivado batch flow shared by the board folders.
# A board Makefile (fpga/<board>/Makefile) sets BOARD, BOARD_DIR, FPGA_PART,
# FPGA_BOARD_PART, FPGA_TOP, FPGA_PROGRAM_PATTERN and the absolute paths in
# SYN_FILES, XDC_FILES and IP_TCL_FILES, then includes this file.
#   make project    $(BUILD_DIR)/project/: a Vivado project (sources, XDC, the
#                   top's BuildId/ClockKhz generics, every IP generated from its Tcl)
#   make bitstream  $(BUILD_DIR)/impl/: a fresh project synthesized, implemented
#                   and checked (core clock = the make-synth estimate, timing met);
#                   the bitstream is copied to $(BUILD_DIR)/$(FPGA_TOP).bit
#   make program    load $(BUILD_DIR)/$(FPGA_TOP).bit over JTAG (hw_server HW_SERVER)
#   make clean      remove $(BUILD_DIR)
# Every Vivado step runs in a *.tmp folder that is renamed into place only when
# the step succeeds; a failed step leaves nothing but its log,
# $(BUILD_DIR)/<step>-failed.log. Without Vivado (VIVADO not found) project,
# bitstream and program stop at once with one line and build nothing.
# Variables: VIVADO (default vivado), BUILD_DIR (default build/fpga-<board> at
# the repository root), JOBS (Vivado runs in parallel), HW_SERVER
# (localhost:3121), FARNN_BOARD_REPO (a folder of board files, if Vivado lacks
# the board part), FARNN_BUILD_ID (8 hex digits instead of the git commit).

FARNN_COMMON := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
FARNN_ROOT ?= $(abspath $(FARNN_COMMON)/../..)
VIVADO ?= vivado
BUILD_DIR ?= $(FARNN_ROOT)/build/fpga-$(BOARD)
JOBS ?= $(shell nproc 2>/dev/null || echo 4)
HW_SERVER ?= localhost:3121
BITFILE := $(BUILD_DIR)/$(FPGA_TOP).bit

.PHONY: all project bitstream program clean
all: bitstream

# No Vivado: one line, non-zero exit, before anything is made.
farnn_vivado_goals := $(filter all project bitstream program,$(or $(MAKECMDGOALS),all))
ifneq ($(farnn_vivado_goals),)
ifeq ($(shell command -v $(VIVADO) 2>/dev/null),)
$(error fpga/$(BOARD): Vivado not found ('$(VIVADO)' is not on PATH; source settings64.sh of a Vivado installation or set VIVADO=/path/to/vivado); nothing was built)
endif
endif

# $(call farnn_config,FILE): the Tcl config create_project.tcl reads.
define farnn_config
{ echo "set farnn_board $(BOARD)"; \
  echo "set farnn_part $(FPGA_PART)"; \
  echo "set farnn_board_part {$(FPGA_BOARD_PART)}"; \
  echo "set farnn_top $(FPGA_TOP)"; \
  echo "set farnn_root {$(FARNN_ROOT)}"; \
  echo "set farnn_syn_files [list $(SYN_FILES)]"; \
  echo "set farnn_xdc_files [list $(XDC_FILES)]"; \
  echo "set farnn_ip_tcl_files [list $(IP_TCL_FILES)]"; } > $(1)
endef

# $(call farnn_vivado,STEP,DIR,SCRIPT,ARGS): run SCRIPT in DIR; on failure keep
# the log as $(BUILD_DIR)/STEP-failed.log, remove DIR and stop.
define farnn_vivado
cd $(2) && $(VIVADO) -mode batch -nojournal -log vivado-$(1).log -source $(FARNN_COMMON)/vivado/$(3) -tclargs $(4) \
  || { cp -f $(2)/vivado-$(1).log $(BUILD_DIR)/$(1)-failed.log 2>/dev/null; rm -rf $(2); \
       echo "fpga/$(BOARD): $(1) failed; log: $(BUILD_DIR)/$(1)-failed.log" >&2; exit 1; }
endef

project:
	@rm -rf $(BUILD_DIR)/project.tmp $(BUILD_DIR)/project-failed.log && mkdir -p $(BUILD_DIR)/project.tmp
	@$(call farnn_config,$(BUILD_DIR)/project.tmp/config.tcl)
	@trap 'rm -rf $(BUILD_DIR)/project.tmp' INT TERM; \
	  $(call farnn_vivado,project,$(BUILD_DIR)/project.tmp,create_project.tcl,config.tcl $(BUILD_DIR)/project.tmp)
	@rm -rf $(BUILD_DIR)/project && mv $(BUILD_DIR)/project.tmp $(BUILD_DIR)/project
	@echo "fpga/$(BOARD): project $(BUILD_DIR)/project/$(FPGA_TOP).xpr"

bitstream:
	@rm -rf $(BUILD_DIR)/impl.tmp $(BUILD_DIR)/bitstream-failed.log && mkdir -p $(BUILD_DIR)/impl.tmp
	@$(call farnn_config,$(BUILD_DIR)/impl.tmp/config.tcl)
	@trap 'rm -rf $(BUILD_DIR)/impl.tmp' INT TERM; \
	  $(call farnn_vivado,bitstream,$(BUILD_DIR)/impl.tmp,create_project.tcl,config.tcl $(BUILD_DIR)/impl.tmp) && \
	  $(call farnn_vivado,bitstream,$(BUILD_DIR)/impl.tmp,build.tcl,$(BUILD_DIR)/impl.tmp $(JOBS))
	@rm -rf $(BUILD_DIR)/impl && mv $(BUILD_DIR)/impl.tmp $(BUILD_DIR)/impl
	@cp $(BUILD_DIR)/impl/$(FPGA_TOP).bit $(BITFILE).tmp && mv $(BITFILE).tmp $(BITFILE)
	@echo "fpga/$(BOARD): bitstream $(BITFILE) (reports in $(BUILD_DIR)/impl/reports)"

program:
	@test -f $(BITFILE) || { echo "fpga/$(BOARD): no bitstream at $(BITFILE): run make bitstream first" >&2; exit 1; }
	@cd $(BUILD_DIR) && $(VIVADO) -mode batch -nojournal -log vivado-program.log \
	  -source $(FARNN_COMMON)/vivado/program.tcl -tclargs $(BITFILE) '$(FPGA_PROGRAM_PATTERN)' $(HW_SERVER)

# clean drives no tool, so it works with or without Vivado.
clean:
	@rm -rf $(BUILD_DIR)
