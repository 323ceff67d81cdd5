"""What a chip-hour costs and what its energy emits: cloud list prices of accelerator instances (each per chip-hour
from the instance's price, with its offer, region and terms), data centres' power usage effectiveness (PUE) and the
carbon intensity of grids. Gathered with their quotes in ``research/costs/sources.md``. Chapter :ref:`ch-costs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from hwlib.data.records import Sourced, cite

TERMS = ("on-demand", "1-year commitment", "3-year commitment", "assumed rental")
"""How a price is paid: by the hour without commitment, under a 1- or 3-year committed-use discount, or a rate a
report assumes."""


@dataclass(frozen=True)
class ChipPrice:
    """One offer of accelerator time: ``provider``'s ``offer`` (an instance of ``chips`` chips of ``chip_key``) in
    ``region`` under ``terms`` (one of ``TERMS``), at ``instance`` USD per hour (Sourced, unit "USD/h"); a
    ``neocloud`` is a GPU cloud beside the three largest. Chapter :ref:`ch-costs`."""

    key: str
    chip_key: str
    provider: str
    offer: str
    chips: int
    region: str
    terms: str
    instance: Sourced
    neocloud: bool = False

    @property
    def usd_per_chip_hour(self) -> float:
        """The instance's price over its chips (USD per chip-hour)."""
        return float(self.instance.value) / self.chips


_AWS = cite(
    "AWS EC2 on-demand (Linux) prices as the SkyPilot catalog copies them from the AWS Price List API: "
    "skypilot-org/skypilot-catalog, catalogs/v9/aws/vms.csv, commit 2c3d7ea7 (a third-party copy; p5.48xlarge's "
    "55.04 also in datareceipts/data-receipts 109-gpu-pricing/hyperscalers.json, retrieved 2026-11-09)",
    "2026-12-06",
)
_GCP = cite(
    "Google Cloud Compute Engine prices from the Cloud Billing SKU API as Cyclenerd/google-cloud-pricing-cost-"
    "calculator copies them: pricing.yml at commit fd66b26f (generated 2026-07-30; a third-party copy; month = "
    "hour x 730)",
    "2026-12-06",
)
_GCP_TPU = cite(
    "Google Cloud TPU on-demand prices from the Cloud Billing SKU API as the SkyPilot catalog copies them: "
    "skypilot-org/skypilot-catalog, catalogs/v8/gcp/vms.csv, commit 006059e0 (a third-party copy); chips per slice "
    "from cloud.google.com/tpu/docs (v5p-8: '2x2x1 | 8 | 4', 8 TensorCores on 4 chips; v5e and v6e: one TensorCore "
    "per chip)",
    "2026-12-06",
)
_AZURE = cite(
    "Azure pay-as-you-go prices as the SkyPilot catalog copies them: skypilot-org/skypilot-catalog, "
    "catalogs/v6/azure/vms.csv, commit 098741e7 (a third-party copy, older schema; its GPU count of 12 for "
    "ND96isr_H100_v5 is wrong: Microsoft Learn's ND H100 v5 page says eight GPUs)",
    "2026-12-06",
)
_OCI = cite(
    "Oracle Cloud (OCI) prices from Oracle's price-list API as the SkyPilot catalog copies them: "
    "skypilot-org/skypilot-catalog, catalogs/v8/oci/vms.csv, commit 05887511 (a third-party copy)",
    "2026-12-06",
)
_LAMBDA = cite(
    "Lambda on-demand rate card as the SkyPilot catalog copies it: skypilot-org/skypilot-catalog, "
    "catalogs/v8/lambda/vms.csv, commit 0f407038 (a third-party copy)",
    "2026-12-06",
)
_NEBIUS = cite(
    "Nebius on-demand rate card as the SkyPilot catalog copies it: skypilot-org/skypilot-catalog, "
    "catalogs/v8/nebius/vms.csv, commit 0082b043 (a third-party copy)",
    "2026-12-06",
)
_DEEPSEEK = cite(
    "DeepSeek-AI, DeepSeek-V3 Technical Report, arXiv:2412.19437, Sec. 1 and Table 1 (stored copy of the arXiv "
    "HTML v2)",
    "2026-12-06",
)


def _offer(source, key, chip_key, provider, offer, chips, region, terms, usd, quoted, neocloud=False, note=""):
    return ChipPrice(key, chip_key, provider, offer, chips, region, terms, source(usd, "USD/h", quoted, note), neocloud)


PRICES = (
    _offer(_AWS, "aws-p5-h100", "h100-sxm", "AWS", "p5.48xlarge", 8, "us-east-1", "on-demand", 55.04,
           "p5.48xlarge,H100,8.0,192.0,2048.0,...,55.04,...,us-east-1"),
    _offer(_AWS, "aws-p5en-h200", "h200", "AWS", "p5en.48xlarge", 8, "us-east-1", "on-demand", 63.296,
           "p5en.48xlarge,H200,8.0,192.0,2048.0,...,63.296,...,us-east-1"),
    _offer(_AWS, "aws-p6-b200", "b200", "AWS", "p6-b200.48xlarge", 8, "us-east-1", "on-demand", 113.9328,
           "p6-b200.48xlarge,B200,8.0,192.0,2048.0,...,113.9328,...,us-east-1"),
    _offer(_GCP, "gcp-a3-h100", "h100-sxm", "Google Cloud", "a3-highgpu-8g", 8, "us-central1", "on-demand", 88.49,
           "compute.instance.a3-highgpu-8g us-central1: hour: 88.4899999025753", note="GPUs, vCPUs, memory and 6 TB "
           "of local SSD."),
    _offer(_GCP, "gcp-a3-h100-1y", "h100-sxm", "Google Cloud", "a3-highgpu-8g", 8, "us-central1",
           "1-year commitment", 44810.08066464 / 730, "month_1y: 44810.08066464", note="month_1y / 730 h (derived)."),
    _offer(_GCP, "gcp-a3-h100-3y", "h100-sxm", "Google Cloud", "a3-highgpu-8g", 8, "us-central1",
           "3-year commitment", 28370.99821392 / 730, "month_3y: 28370.99821392", note="month_3y / 730 h (derived)."),
    _offer(_GCP, "gcp-a2-a100", "a100-80gb", "Google Cloud", "a2-ultragpu-8g", 8, "us-central1", "on-demand",
           40.5503831232877, "compute.instance.a2-ultragpu-8g us-central1: hour: 40.5503831232877"),
    _offer(_GCP_TPU, "gcp-v5e", "v5e", "Google Cloud", "tpu-v5litepod-8", 8, "us-central1", "on-demand", 9.6,
           ",,,tpu-v5litepod-8,1,tpu-v5litepod-8,us-central1,us-central1-a,9.6,1.95941"),
    _offer(_GCP_TPU, "gcp-v5p", "v5p", "Google Cloud", "tpu-v5p-8", 4, "us-central1", "on-demand", 16.8,
           ",,,tpu-v5p-8,1,tpu-v5p-8,us-central1,us-central1-a,16.8,3.3428"),
    _offer(_GCP_TPU, "gcp-v6e", "v6e", "Google Cloud", "tpu-v6e-8", 8, "us-central1", "on-demand", 21.6,
           ",,,tpu-v6e-8,1,tpu-v6e-8,us-central1,us-central1-a,21.6,4.35366"),
    _offer(_AZURE, "azure-nd-h100", "h100-sxm", "Azure", "Standard_ND96isr_H100_v5", 8, "eastus", "on-demand", 98.32,
           "Standard_ND96isr_H100_v5,H100,12,96.0,1900,H100,98.32,98.32,eastus,V2"),
    _offer(_OCI, "oci-h100", "h100-sxm", "Oracle Cloud", "BM.GPU.H100.8", 8, "af-johannesburg-1", "on-demand", 80.0,
           'BM.GPU.H100.8,H100,8,224,2048,"{...}",80,,af-johannesburg-1'),
    _offer(_OCI, "oci-h200", "h200", "Oracle Cloud", "BM.GPU.H200.8", 8, "af-johannesburg-1", "on-demand", 80.0,
           'BM.GPU.H200.8,H200,8,224,3072,"{...}",80,,af-johannesburg-1'),
    _offer(_OCI, "oci-b200", "b200", "Oracle Cloud", "BM.GPU.B200.8", 8, "af-johannesburg-1", "on-demand", 112.0,
           'BM.GPU.B200.8,B200,8,256,4096,"{...}",112,,af-johannesburg-1'),
    _offer(_OCI, "oci-mi300x", "mi300x", "Oracle Cloud", "BM.GPU.MI300X.8", 8, "af-johannesburg-1", "on-demand",
           48.0, 'BM.GPU.MI300X.8,MI300X,8,224,2048,"{...}",48,,af-johannesburg-1'),
    _offer(_LAMBDA, "lambda-h100", "h100-sxm", "Lambda", "gpu_8x_h100_sxm5", 8, "us-east-1", "on-demand", 31.92,
           "gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,31.92,us-east-1", neocloud=True),
    _offer(_NEBIUS, "nebius-h100", "h100-sxm", "Nebius", "gpu-h100-sxm_8gpu-128vcpu-1600gb", 8, "eu-north1",
           "on-demand", 23.60, "gpu-h100-sxm_8gpu-128vcpu-1600gb,H100,8,128,1600,23.60,eu-north1", neocloud=True),
    _offer(_NEBIUS, "nebius-h200", "h200", "Nebius", "gpu-h200-sxm_8gpu-128vcpu-1600gb", 8, "us-central1",
           "on-demand", 28.00, "gpu-h200-sxm_8gpu-128vcpu-1600gb,H200,8,128,1600,28.00,us-central1", neocloud=True),
    _offer(_NEBIUS, "nebius-b200", "b200", "Nebius", "gpu-b200-sxm_8gpu-160vcpu-1792gb", 8, "us-central1",
           "on-demand", 44.00, "gpu-b200-sxm_8gpu-160vcpu-1792gb,B200,8,160,1792,44.00,us-central1", neocloud=True),
    _offer(_DEEPSEEK, "deepseek-v3-h800", "h800-sxm", "DeepSeek-AI", "H800 (the report's assumption)", 1, "-",
           "assumed rental", 2.0, "Assuming the rental price of the H800 GPU is $2 per GPU hour"),
)  # fmt: skip
"""Every price record (``ChipPrice``)."""
PRICE_BY_KEY = MappingProxyType({price.key: price for price in PRICES})
DEFAULT_PRICES = MappingProxyType(
    {
        "h100-sxm": "aws-p5-h100",
        "h200": "aws-p5en-h200",
        "b200": "aws-p6-b200",
        "a100-80gb": "gcp-a2-a100",
        "mi300x": "oci-mi300x",
        "v5e": "gcp-v5e",
        "v5p": "gcp-v5p",
        "v6e": "gcp-v6e",
        "h800-sxm": "deepseek-v3-h800",
    }
)
"""The price a chip gets when none is given: the on-demand list price of a large cloud (AWS for NVIDIA's GPUs, Google
Cloud for TPUs and the A100, Oracle for the MI300X, which AWS and Google do not list), and for the H800, which no
cloud lists, DeepSeek-V3's assumed rental."""

_PUE_PRESS = cite(
    "DatacenterDynamics, 'AWS global data centers achieved PUE of 1.15 in 2023' (December 2024), "
    "https://www.datacenterdynamics.com/en/news/aws-global-data-centers-achieved-pue-of-115-in-2023/ (trade press)",
    "2026-12-06",
)
PUES = MappingProxyType(
    {
        "aws-2023": _PUE_PRESS(
            1.15, "1", "the cloud giant saw a global PUE of 1.15 across its data centers in 2023", "AWS's fleet."
        ),
        "google-2024": _PUE_PRESS(
            1.1, "1", "Google claims its facilities average a PUE of around 1.1", "Google's fleet, as of late 2024."
        ),
        "microsoft-average": _PUE_PRESS(
            1.18, "1", "with a global facility average of 1.18 across the portfolio", "Microsoft's fleet."
        ),
        "meta-2021": cite(
            "Meta, Sustainability: data centers, https://sustainability.fb.com/data-centers/", "2026-12-06"
        )(
            1.09,
            "1",
            "Data center buildings we completed in 2021 exhibit a Power Usage Effectiveness (PUE) of 1.09",
            "Meta's buildings completed in 2021 (first-party).",
        ),
    }
)
"""Power usage effectiveness: a facility's power over its IT equipment's."""
DEFAULT_PUE = "aws-2023"
"""The PUE a cost takes when none is given: the fleet of the cloud whose prices are the GPUs' defaults."""

_GOOGLE_REGIONS = cite(
    "GoogleCloudPlatform/region-carbon-info, data/yearly/2025.csv, commit 74d9bf81 ('Grid carbon intensity "
    "(gCO2eq / kWh)': 'the average operational gross emissions per unit of energy from the grid')",
    "2026-12-06",
)
GRIDS = MappingProxyType(
    {
        "us-2023": cite(
            "U.S. EIA, 'How much carbon dioxide is produced per kilowatthour of U.S. electricity "
            "generation?', https://www.eia.gov/tools/faqs/faq.php?id=74&t=3",
            "2026-12-06",
        )(
            1.53e12 / 4.18e12 * 1e3,
            "g/kWh",
            "about 4.18 trillion kilowatthours (kWh) ... about 1.53 billion metric tons ... of carbon dioxide",
            "2023 utility-scale generation; CO2 alone, not CO2e: 1.53e15 g / 4.18e12 kWh (derived).",
        ),
        "world-2024": cite(
            "IEA, Electricity 2025: Emissions, https://www.iea.org/reports/electricity-2025/emissions", "2026-12-06"
        )(445.0, "g/kWh", "declining from 445 g CO2/kWh in 2024", "The world's average, 2024."),
        "gcp-us-central1": _GOOGLE_REGIONS(431.95, "g/kWh", "us-central1,Iowa,0.88,431.95"),
        "gcp-us-east4": _GOOGLE_REGIONS(343.48, "g/kWh", "us-east4,Northern Virginia,0.57,343.48"),
        "gcp-us-west1": _GOOGLE_REGIONS(97.85, "g/kWh", "us-west1,Oregon,0.83,97.85"),
        "gcp-europe-west4": _GOOGLE_REGIONS(194.35, "g/kWh", "europe-west4,Eemshaven,0.82,194.35"),
        "gcp-europe-north1": _GOOGLE_REGIONS(29.84, "g/kWh", "europe-north1,Finland,0.98,29.84"),
        "gcp-asia-southeast1": _GOOGLE_REGIONS(365.66, "g/kWh", "asia-southeast1,Singapore,0.05,365.66"),
    }
)
"""Grids' carbon intensity (gCO2 per kWh drawn, location-based)."""
DEFAULT_GRID = "us-2023"
"""The grid a cost takes when none is given: the United States' average, where the default prices' regions are."""


@dataclass(frozen=True)
class PublishedRunCost:
    """A training run's cost as its authors state it: ``gpu_hours`` of ``chip_key``, and where the text gives them
    its ``stages``, each (the key of the measured run of ``hw.training_runs()`` whose mesh and batch it ran, its
    tokens: Sourced), the share of the wall time that trained (``effective_time``: lost to failures and restarts
    otherwise), the power charged per GPU (``power``) and the location-based ``co2e`` (kg). Chapter
    :ref:`ch-costs`."""

    key: str
    chip_key: str
    gpu_hours: Sourced
    stages: tuple[tuple[str, Sourced], ...] = ()
    effective_time: Sourced | None = None
    power: Sourced | None = None
    co2e: Sourced | None = None


_LLAMA31_CARD = cite(
    "meta-llama/llama-models, models/llama3_1/MODEL_CARD.md, commit 1b28708f ('Training Time (GPU hours)', 'Training "
    "Power Consumption (W)', 'Training Location-Based Greenhouse Gas Emissions (tons CO2eq)')",
    "2026-12-06",
)
_LLAMA2_CARD = cite(
    "meta-llama/llama-models, models/llama2/MODEL_CARD.md, commit d13eea5e ('Time (GPU hours)', 'Power Consumption "
    "(W)', 'Carbon Emitted(tCO2eq)'; 'peak power capacity per GPU device for the GPUs used adjusted for power usage "
    "efficiency')",
    "2026-12-06",
)
_LLAMA3_CARD = cite(
    "meta-llama/llama-models, models/llama3/MODEL_CARD.md, commit 1f0feb79 ('Time (GPU hours)', 'Power Consumption "
    "(W)', 'Carbon Emitted(tCO2eq)')",
    "2026-12-06",
)
_LLAMA4_CARD = cite(
    "meta-llama/llama-models, models/llama4/MODEL_CARD.md, commit 038acb9f ('Training Time (GPU hours)', 'Training "
    "Power Consumption (W)', 'Training Location-Based Greenhouse Gas Emissions (tons CO2eq)')",
    "2026-12-06",
)
_CARD_POWER = _LLAMA31_CARD(700.0, "W", "H100-80GB (TDP of 700W)")
_V3 = cite("DeepSeek-AI, 'DeepSeek-V3 Technical Report', arXiv:2412.19437, Sec. 1 and 4.2", "2026-12-06")


def _card(cited, key, chip_key, hours, watts, tonnes, row):
    hours, watts, co2e = cited(hours, "h", row), cited(watts, "W", row), cited(tonnes * 1e3, "kg", row)
    return PublishedRunCost(key, chip_key, hours, power=watts, co2e=co2e)


_LLAMA3_RUN = cite(
    "Llama Team, 'The Llama 3 Herd of Models', arXiv:2407.21783 (2024), Sec. 1, 3.3.4 and 3.4.2 (read in a text copy)"
)
PUBLISHED_RUN_COSTS = (
    PublishedRunCost(
        "llama-3.1-405b",
        "h100-sxm",
        _LLAMA31_CARD(30.84e6, "h", "Llama 3.1 405B | 30.84M | 700 | 8,930 | 0"),
        stages=(
            ("llama3-405b-16k-gpus", _LLAMA3_RUN(15.6e12, "1", "on 15.6T text tokens", "Pre-training at 8K.")),
            (
                "llama3-405b-16k-gpus-131k",
                _LLAMA3_RUN(
                    0.8e12,
                    "1",
                    "This long-context pre-training stage was performed using approximately 800B training tokens",
                    "Long context, up to 128K, on the CP 16 mesh of Table 4.",
                ),
            ),
        ),
        effective_time=_LLAMA3_RUN(
            0.9, "1", "we achieved higher than 90% effective training time", "At least 0.9: the share is an upper end."
        ),
        power=_CARD_POWER,
        co2e=_LLAMA31_CARD(8930e3, "kg", "Llama 3.1 405B | 30.84M | 700 | 8,930 | 0"),
    ),
    _card(_LLAMA31_CARD, "llama-3.1-70b", "h100-sxm", 7.0e6, 700, 2040, "Llama 3.1 70B | 7.0M | 700 | 2,040 | 0"),
    _card(_LLAMA31_CARD, "llama-3.1-8b", "h100-sxm", 1.46e6, 700, 420, "Llama 3.1 8B | 1.46M | 700 | 420 | 0"),
    PublishedRunCost(
        "deepseek-v3",
        "h800-sxm",
        _V3(2664e3, "h", "our pre-training stage is completed in less than two months and costs 2664K GPU hours"),
        stages=(
            (
                "deepseek-v3-2048-h800",
                _V3(14.8e12, "1", "We pre-train DeepSeek-V3 on 14.8T high-quality and diverse tokens"),
            ),
        ),
    ),
)  # fmt: skip
"""Training runs whose authors state their GPU-hours (and emissions): the checks of ``hwlib.costs``."""
MODEL_CARD_RUNS = (
    *(run for run in PUBLISHED_RUN_COSTS if run.co2e is not None),
    _card(_LLAMA2_CARD, "llama-2-7b", "a100-80gb", 184320, 400, 31.22, "|Llama 2 7B|184320|400|31.22|"),
    _card(_LLAMA2_CARD, "llama-2-13b", "a100-80gb", 368640, 400, 62.44, "|Llama 2 13B|368640|400|62.44|"),
    _card(_LLAMA2_CARD, "llama-2-70b", "a100-80gb", 1720320, 400, 291.42, "|Llama 2 70B|1720320|400|291.42|"),
    _card(_LLAMA3_CARD, "llama-3-8b", "h100-sxm", 1.3e6, 700, 390, "Llama 3 8B | 1.3M | 700 | 390"),
    _card(_LLAMA3_CARD, "llama-3-70b", "h100-sxm", 6.4e6, 700, 1900, "Llama 3 70B | 6.4M | 700 | 1900"),
    _card(_LLAMA4_CARD, "llama-4-scout", "h100-sxm", 5.0e6, 700, 1354, "| Llama 4 Scout | 5.0M | 700 | 1,354 | 0 |"),
    _card(_LLAMA4_CARD, "llama-4-maverick", "h100-sxm", 2.38e6, 700, 645,
          "| Llama 4 Maverick | 2.38M | 700 | 645 | 0 |"),
)  # fmt: skip
"""Every run whose model card states its GPU-hours, the power it charged per GPU and its location-based emissions:
Meta's cards for Llama 2, 3, 3.1 and 4 (``hwlib.cost_check.emissions_check``)."""
