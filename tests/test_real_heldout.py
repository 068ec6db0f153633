"""The held-out real-document set (eval/golden/real_heldout/): documents the heuristics were
never tuned on when they were added. Its files agree with what its build derives, no
document of the tuned set is in it (nor another rendering of one), every label value is
in its text, and its evaluation runs through the queue. Issue 14's catch target is
asserted; its false-alarm targets are not met on the fresh documents of round 2, so the
figures its README records are a ceiling a change may not raise."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from tests.conftest import starts_processes
from vetq.eval import extraction_eval as ev
from vetq.eval import real_eval as re_
from vetq.eval.golden.real.build import source_name, source_pin

HELDOUT = re_.HELDOUT
DOCUMENTS = re_.load_documents(re_.REAL_SETS["heldout"])
TUNED = re_.load_documents(re_.REAL_SETS["tuned"])


def _heldout_script(name: str):
    spec = importlib.util.spec_from_file_location(f"heldout_{name}", Path(HELDOUT) / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_tuned_document_is_held_out():
    identity_keys = _heldout_script("derive").identity_keys
    tuned = {(source_name(d["source"]), d["source"]["path"]) for d in TUNED}
    tuned_keys = {key for d in TUNED for key in identity_keys(d["truth"])}
    seen: set = set()
    for doc in DOCUMENTS:
        assert (source_name(doc["source"]), doc["source"]["path"]) not in tuned, doc["id"]
        # keys from the labels (a value not in the text is null there): a weaker check than
        # derive.py's, which compares what the XML states
        keys = {key for key in identity_keys(doc["truth"]) if None not in key[1] and "" not in key[1]}
        assert not keys & tuned_keys, (doc["id"], keys & tuned_keys)
        assert not keys & seen, (doc["id"], keys & seen)
        seen |= keys
    assert not {d["id"] for d in DOCUMENTS} & {d["id"] for d in TUNED}


def test_every_document_names_its_source_licence_and_commit_and_its_values_are_in_its_text():
    assert len(DOCUMENTS) >= 92
    for doc in DOCUMENTS:
        source = doc["source"]
        # pinned: a commit, or a package's version and its archive's SHA-256
        pinned = re.fullmatch(r"[0-9a-f]{40}", source.get("commit", "")) or (
            source.get("version") and re.fullmatch(r"[0-9a-f]{64}", source.get("sha256", ""))
        )
        assert source["licence"] and pinned and source["path"], doc["id"]
        assert (HELDOUT / doc["text_file"]).read_text(encoding="utf-8") == doc["text"]
        for name, value in doc["truth"].items():
            if value is not None:
                assert re_.value_in_text(doc["schema"], name, value, doc["text"]), (doc["id"], name, value)


# Each source's licence text, kept beside the tuned set's (eval/golden/real/LICENSES/README.md)
LICENCE_FILES = {
    "ZUGFeRD/corpus": ("Apache-2.0", ["Apache-2.0.txt"]),
    "stephanstapel/ZUGFeRD-csharp": ("Apache-2.0", ["Apache-2.0.txt"]),
    "FacturX-NET/FacturXDotNet": ("MIT", ["MIT-FacturXDotNet.txt"]),
    "akretion/factur-x": ("BSD-3-Clause", ["BSD-3-Clause-factur-x.txt"]),
    "konik-io/konik": ("AGPL-3.0-or-later", ["AGPL-3.0.txt", "NOTICE-konik.md"]),
    "Engenere/BrazilFiscalReport": ("LGPL-3.0", ["LGPL-3.0.txt", "GPL-3.0.txt"]),
    "asseinfo/br_danfe": ("MIT", ["MIT-br_danfe.txt"]),
    "fabyo/NFEDanfe": ("MIT", ["MIT-NFEDanfe.txt"]),
    "ismaelnjr/nfetoolkit-project": ("MIT", ["MIT-nfetoolkit.txt"]),
    "nodecfdi/cfdi-to-pdf": ("MIT", ["MIT-cfdi-to-pdf.txt"]),
    "itplr-kosit/xrechnung-visualization": ("Apache-2.0", ["Apache-2.0.txt"]),
    "ksef4dev/ksef-fop": ("Apache-2.0", ["Apache-2.0.txt"]),
    "sstybel/ksef-pdf-generator": ("MIT", ["MIT-ksef-pdf-generator.txt"]),
    "GoogleCloudPlatform/document-ai-samples": ("Apache-2.0", ["Apache-2.0.txt"]),
    "nox999/eFactura-xml2pdf": ("GPL-3.0", ["GPL-3.0.txt"]),
    "isdoc/isdoc.pdf": ("Apache-2.0", ["Apache-2.0.txt"]),
    "blackysoft/DTExml2pdf": ("GPL-3.0", ["GPL-3.0.txt"]),
    "ad-si/invoice-maker": ("ISC", ["ISC-invoice-maker.txt"]),
    "LaravelDaily/laravel-invoices": ("GPL-3.0", ["GPL-3.0.txt"]),
    "mrzool/invoice-boilerplate": ("GPL-2.0", ["GPL-2.0.txt"]),
    # round 2 (README: fresh documents)
    "PyAr/pyafipws": ("LGPL-3.0", ["LGPL-3.0.txt", "GPL-3.0.txt", "NOTICE-pyafipws.txt"]),
    "hugopl/invoicegenerator": ("MIT", ["MIT-invoicegenerator.txt"]),
    "excid3/receipts": ("MIT", ["MIT-receipts.txt"]),
    "tinyzimmer/ginvoicer": ("LGPL-3.0", ["LGPL-3.0.txt", "GPL-3.0.txt"]),
    "h1dd3nsn1p3r/pdf-invoice": ("MIT", ["MIT-pdf-invoice.txt"]),
    "CZ-NIC/fred-doc2pdf": ("GPL-3.0", ["GPL-3.0.txt"]),
    "woofers/org-invoice-template": ("GPL-3.0", ["GPL-3.0.txt"]),
    "famoser/pdf-generator": ("MIT", ["MIT-famoser-pdf-generator.txt"]),
    "MJochim/LaTeX-Rechnung": ("MIT", ["MIT-LaTeX-Rechnung.txt"]),
    "erictapen/typst-invoice": ("GPL-3.0-or-later", ["GPL-3.0.txt"]),
    "koodilehto/invoice-latex": ("MIT", ["MIT-invoice-latex.txt"]),
    "dominem/faktura": ("EPL-2.0", ["EPL-2.0.txt"]),
    "ahelmberger/factur-x-kit": ("MIT", ["MIT-factur-x-kit.txt"]),
    "credimi/digital-invoice-to-pdf": ("MIT", ["MIT-digital-invoice-to-pdf.txt"]),
    "fakturoid/fakturoid-php": ("MIT", ["MIT-fakturoid-php.txt"]),
    "Securibox/facturx": ("MIT", ["MIT-Securibox-facturx.txt"]),
    "pereacarlos/SimpleFacturaSDK-python": ("MIT", ["MIT-SimpleFacturaSDK-python.txt"]),
    "lpinedozav/SDKSimpleFacturaPHP": ("MIT", ["MIT-SDKSimpleFacturaPHP.txt"]),
    # round 3 (README: fresh documents)
    "MoncefMak/ferropdf": ("MIT", ["MIT-ferropdf.txt"]),
    "Lulzx/tinypdf": ("MIT", ["MIT-tinypdf.txt"]),
    "ian-cowley/tinypdf-csharp": ("MIT", ["MIT-tinypdf-csharp.txt"]),
    "hashicorp/packer-plugin-hashicups": ("MPL-2.0", ["MPL-2.0-packer-plugin-hashicups.txt"]),
    "AlexAltea/invoice": ("MIT", ["MIT-AlexAltea-invoice.txt"]),
    "tesla-software/chrome2pdf": ("MIT", ["MIT-chrome2pdf.txt"]),
    "domani-sistemas/sped_fiscal_viewer": ("MIT", ["MIT-sped_fiscal_viewer.txt"]),
    # round 4 (README: fresh documents)
    "pdfme/pdfme": ("MIT", ["MIT-pdfme.txt"]),
    "Joel21/QuijoteLuiPrinter": ("GPL-3.0", ["GPL-3.0.txt"]),
    "OCA/l10n-switzerland": ("AGPL-3.0", ["AGPL-3.0.txt"]),
    "sprain/php-swiss-qr-bill": ("MIT", ["MIT-php-swiss-qr-bill.txt"]),
    # round 4 (README: fresh documents, generators' example prints)
    "functicons/html-to-pdf-generator": ("MIT", ["MIT-html-to-pdf-generator.txt"]),
    "DeVinci-FabLab/Invoice-templates": ("MIT", ["MIT-DeVinci-Invoice-templates.txt"]),
    "kittiphong-am/pyfpdf": ("LGPL-3.0", ["LGPL-3.0.txt", "GPL-3.0.txt"]),
    "pirocheto/mcp-invoice-generator": ("MIT", ["MIT-mcp-invoice-generator.txt"]),
    "sporty303/snapforge-mcp": ("MIT", ["MIT-snapforge-mcp.txt"]),
    "thisha-me/pdf-light": ("ISC", ["ISC-pdf-light.txt"]),
    "navtej/typst-invoice-template-india": ("Apache-2.0", ["Apache-2.0.txt"]),
    "adfaure/invoice-template": ("MIT", ["MIT-adfaure-invoice-template.txt"]),
    "eluinstra/efactuur-pdf-nl": ("Apache-2.0", ["Apache-2.0.txt"]),
    "angelodlfrtr/go-invoice-generator": ("Apache-2.0", ["Apache-2.0.txt", "NOTICE-go-invoice-generator.txt"]),
    "ryota2357/typst-invoice-template": ("MIT", ["MIT-typst-invoice-template-ryota2357.txt"]),
    "gastongouron/ironpress": ("MIT", ["MIT-ironpress.txt"]),
    "thatsme/tincture": ("MIT", ["MIT-tincture.txt"]),
    "McPeakDev/pdf-forge": ("MIT", ["MIT-pdf-forge.txt"]),
    "eniallator/Invoice-Generator": ("MIT", ["MIT-eniallator-Invoice-Generator.txt"]),
    "lowlandresearch/invoicing": ("MIT", ["MIT-lowlandresearch-invoicing.txt"]),
    "slashtechno/toggl-invoice-generator": ("MIT", ["MIT-toggl-invoice-generator.txt"]),
    "zzkt/yoyodyne": ("GPL-3.0", ["GPL-3.0.txt"]),
    "caickdias/invoice-gen": ("MIT", ["MIT-caickdias-invoice-gen.txt"]),
    "realchonk/accounthing": ("GPL-3.0", ["GPL-3.0.txt"]),
    "brianmeja/PDFInvoiceGenerator": ("MIT", ["MIT-PDFInvoiceGenerator.txt"]),
    "Dzishy/PDF-invoice": ("MIT", ["MIT-Dzishy-PDF-invoice.txt"]),
    "strzibny/invoice_printer": ("MIT", ["MIT-invoice_printer.txt"]),
    "johnfercher/maroto": ("MIT", ["MIT-maroto.txt"]),
    "baptistejamin/node-microinvoice": ("MIT", ["MIT-node-microinvoice.txt"]),
    "treyhunner/invoices": ("MIT", ["MIT-treyhunner-invoices.txt"]),
    "chrisjenx/compose2pdf": ("Apache-2.0", ["Apache-2.0.txt"]),
    "ella-to/sahar": ("MIT", ["MIT-sahar.txt"]),
    "gompdf/gompdf": ("Apache-2.0", ["Apache-2.0.txt"]),
    "felixhoffmnn/latex-templates": ("GPL-3.0", ["GPL-3.0.txt"]),
    "geektortoise/Invoice-LaTeX": ("MIT", ["MIT-Invoice-LaTeX-geektortoise.txt"]),
    "RedWarbler/tex-invoice": ("MIT", ["MIT-tex-invoice.txt"]),
    "Johennes/make-invoice": ("AGPL-3.0-or-later", ["AGPL-3.0.txt"]),
    "bislerium/oig": ("Apache-2.0", ["Apache-2.0.txt"]),
    # round 5 (generators: JS / PHP / Ruby / LaTeX / Typst)
    "philippdrebes/typst-payqr-swiss": ("LGPL-3.0-only", ["LGPL-3.0.txt", "GPL-3.0.txt"]),
    "cco/my-invoices": ("GPL-3.0", ["GPL-3.0.txt", "NOTICE-my-invoices.txt"]),
    "eduardokum/laravel-boleto": ("MIT", ["MIT-laravel-boleto.txt"]),
    # round 5 (README: fresh documents, generators' and SDK samples)
    "jorisschellekens/borb": ("AGPL-3.0-or-later", ["AGPL-3.0.txt"]),
    "RikoAppDev/compose-pdf": ("Apache-2.0", ["Apache-2.0.txt"]),
    "Azure-Samples/cognitive-services-REST-api-samples": ("MIT", ["MIT-cognitive-services-REST-api-samples.txt"]),
    "MicrosoftLearning/mslearn-ai-document-intelligence": ("MIT", ["MIT-mslearn-ai-document-intelligence.txt"]),
    "Jaydee94/parselmouth": ("Apache-2.0", ["Apache-2.0.txt"]),
    "manykarim/robotframework-doctestlibrary": ("Apache-2.0", ["Apache-2.0.txt"]),
    "docutray/docutray-python": ("MIT", ["MIT-docutray-python.txt"]),
    "flare-foundation/flare-ai-kit": ("Apache-2.0", ["Apache-2.0.txt"]),
    # round 6 (document-AI samples)
    "mistralai/cookbook": ("MIT", ["MIT-mistral-cookbook.txt"]),
    "MicrosoftLearning/mslearn-ai-fundamentals": ("MIT", ["MIT-mslearn-ai-fundamentals.txt"]),
    "Azure-Samples/azure-ai-content-understanding-dotnet": ("MIT", ["MIT-azure-ai-content-understanding-dotnet.txt"]),
    "Azure-Samples/azure-ai-document-processing-samples": ("MIT", ["MIT-azure-ai-document-processing-samples.txt"]),
    "a-klos/langchain-ocr": ("MIT", ["MIT-langchain-ocr.txt"]),
    "microsoft/markitdown": ("MIT", ["MIT-markitdown.txt"]),
    "enoch3712/ExtractThinker": ("Apache-2.0", ["Apache-2.0.txt"]),
    "microsoft/content-processing-solution-accelerator": ("MIT", ["MIT-content-processing-solution-accelerator.txt"]),
    # round 6 (PDF libraries' test corpora and samples)
    "LibrePDF/OpenPDF": ("LGPL-2.1", ["LGPL-2.1-openpdf-pdfrenderer.txt"]),
    "aspose-pdf/Aspose.PDF-for-Java": ("MIT", ["MIT-Aspose.PDF-for-Java.txt"]),
    # round 7 (e-invoicing libraries and earlier leads)
    "invopop/gobl.html": ("Apache-2.0", ["Apache-2.0.txt"]),
    "thegreenter/docs": ("MIT", ["MIT-greenter-docs.txt"]),
    "pretix/python-drafthorse": ("Apache-2.0", ["Apache-2.0.txt"]),
    "invoice-x/factur-x-ng": ("BSD-3-Clause", ["BSD-3-Clause-factur-x-ng.txt"]),
    # round 8 (invoice / receipt templates' and generators' example prints)
    "gnikyt/markdown-invoice": ("MIT", ["MIT-markdown-invoice.txt"]),
    "maelgangloff/signed-invoice": ("GPL-3.0", ["GPL-3.0.txt"]),
    "ile1/patchpdf": ("MIT", ["MIT-patchpdf.txt"]),
    "increff/commons-template": ("Apache-2.0", ["Apache-2.0.txt"]),
    "mcanouil/demo-generate-quarto-invoices": ("MIT", ["MIT-demo-generate-quarto-invoices.txt"]),
    "mcanouil/generate-quarto-invoices": ("MIT", ["MIT-generate-quarto-invoices.txt"]),
    "rimiti/invoice-it-example": ("MIT", ["MIT-invoice-it-example.txt"]),
    "vorpax/facture-latex": ("MIT", ["MIT-facture-latex.txt"]),
    "arraypress/swift-invoice-pdf": ("MIT", ["MIT-swift-invoice-pdf.txt"]),
    "Matteljay/invoice-pdfkit": ("MIT", ["MIT-invoice-pdfkit.txt"]),
    "bdombro/invoice-pdf-gen": ("MIT", ["MIT-invoice-pdf-gen.txt"]),
    "pagopa/pagopa-receipt-pdf-datastore": ("MIT", ["MIT-pagopa-receipt-pdf-datastore.txt"]),
    "hortoncd/invoice_maker": ("MIT", ["MIT-invoice_maker-hortoncd.txt"]),
    # round 8 (receipts; Asian and Middle-Eastern invoices)
    "ofdrw/ofdrw": ("Apache-2.0", ["Apache-2.0.txt"]),
    "CDNTaxReceipts/CDNTaxReceipts": ("AGPL-3.0", ["AGPL-3.0.txt"]),
    "sypht-team/pdf-anonymizer": ("MIT", ["MIT-pdf-anonymizer.txt"]),
    "mrsool/zatca": ("LGPL-3.0", ["LGPL-3.0.txt", "GPL-3.0.txt", "NOTICE-zatca-sdk.txt"]),
    # round 8 (Central and Eastern European prints)
    "loskoderos/faktura-php": ("MIT", ["MIT-faktura-php.txt"]),
    # round 9 (Western European invoice templates)
    "kaat0/typst-faktura": ("ISC", ["ISC-typst-faktura.txt"]),
    # round 9 (PDF and document-processing libraries' test fixtures)
    "baphuongna/n8n-nodes-extract-pdf": ("MIT", ["MIT-n8n-nodes-extract-pdf.txt"]),
    "Swih/mistral-mcp": ("MIT", ["MIT-mistral-mcp.txt"]),
    "smalot/pdfparser": ("LGPL-3.0", ["LGPL-3.0.txt", "GPL-3.0.txt"]),
    # round 9 (invoicing and billing applications)
    "csa-admin-org/csa-admin": ("MIT", ["MIT-csa-admin.txt"]),
    "danbws/invoice-engine": ("MIT", ["MIT-invoice-engine-danbws.txt"]),
    "idurar/idurar-erp-crm": ("MIT", ["MIT-idurar-erp-crm.txt"]),
    # round 9 (e-commerce prints)
    "baselbers/woocommerce-pdf-invoices": ("GPL-2.0-or-later", ["GPL-2.0.txt"]),
    "typesetsh/magento2-extension": ("MIT", ["MIT-typesetsh.txt"]),
    "typesetsh/shopware6-plugin": ("MIT", ["MIT-typesetsh.txt"]),
    # round 10 (Central and Eastern European and national prints)
    "mlotocki2k/KSeF_Monitor": ("MIT", ["MIT-KSeF_Monitor.txt"]),
    "Thewest123/fit-php": ("MIT", ["MIT-fit-php.txt"]),
    "macuk/polish_invoicer": ("MIT", ["MIT-polish_invoicer.txt"]),
    # round 10 (generators' and applications' example prints, open leads)
    "coreystevensdev/invoiceflow": ("MIT", ["MIT-invoiceflow.txt"]),
    "rafaelurben/django-kmuhelper": ("GPL-3.0", ["GPL-3.0.txt"]),
    "Diana1928/multi-agent-invoice-generator": ("MIT", ["MIT-multi-agent-invoice-generator.txt"]),
    "advancedynamic/pdf-lib": ("MIT", ["MIT-pdf-lib-advancedynamic.txt"]),
    "ccdwyer/omarchy-quicklook": ("MIT", ["MIT-omarchy-quicklook.txt"]),
    # round 10 (extraction and OCR projects' test fixtures)
    "RodrigoSoria07/ai_invoice_detector": ("MIT", ["MIT-ai_invoice_detector.txt"]),
    "jobordu/gmail-smart-forward": ("MIT", ["MIT-gmail-smart-forward.txt"]),
    "dstanback/Veriload": ("MIT", ["MIT-veriload.txt"]),
    "theo-automation-systems/Doc2Struct": ("MIT", ["MIT-doc2struct.txt"]),
    "SAP-samples/btp-cap-dox-invoice-validation": ("Apache-2.0", ["Apache-2.0.txt"]),
    "YutaPuta/document-normalizer": ("MIT", ["MIT-document-normalizer.txt"]),
    "marjan-ahmed/docsamajh-ai": ("MIT", ["MIT-docsamajh-ai.txt"]),
    "Keshx-3/Kountifi-task1--Intelligent-Invoice-Parser": ("MIT", ["MIT-kountifi-invoice-parser.txt"]),
    "durgesh-1801/Verifix": ("MIT", ["MIT-verifix.txt"]),
    # round 10 (Western and Southern European prints)
    "smartive/swiss-qr-bill-decoder": ("MIT", ["MIT-swiss-qr-bill-decoder.txt"]),
    "kevinbaumgartner/SwissQRBill": ("MIT", ["MIT-SwissQRBill-kbaumgartner.txt"]),
    "amazscript/laravel-einvoicing": ("MIT", ["MIT-laravel-einvoicing.txt"]),
    "Aloike/latex-facturation": ("MIT", ["MIT-latex-facturation.txt"]),
    # round 10 (receipts; invoices in other scripts and languages)
    "mabumusa1/zatca": ("LGPL-3.0", ["LGPL-3.0.txt", "GPL-3.0.txt", "NOTICE-zatca-sdk-mabumusa1.txt"]),
    "ETDA/e-TaxInvoice-PDFgen": ("AGPL-3.0", ["AGPL-3.0.txt"]),
    # round 10 (e-commerce, point-of-sale and ERP prints)
    "idempiere/idempiere": ("GPL-2.0", ["GPL-2.0.txt"]),
    "polarsource/polar": ("Apache-2.0", ["Apache-2.0.txt"]),
    "OCA/reporting-engine": ("LGPL-3.0", ["LGPL-3.0.txt", "GPL-3.0.txt"]),
    "ekylibre/ekylibre": ("AGPL-3.0", ["AGPL-3.0.txt"]),
    "OCA/edi": ("AGPL-3.0", ["AGPL-3.0.txt"]),
    # round 11 (mobile, desktop and cross-platform applications, report engines)
    "coenttb/swift-document-templates": ("Apache-2.0", ["Apache-2.0.txt", "Apache-2.0-swift-document-templates.md"]),
    "Swiftly-Developed/Swiftly-PDFKit": ("MIT", ["MIT-Swiftly-PDFKit.txt"]),
    # round 11 (invoices from Asia, the Middle East and Africa)
    "sos37591-prog/groundextract-kr": ("Apache-2.0", ["Apache-2.0.txt"]),
    # round 11 (time-tracking, billing and accounting applications' prints)
    "iwasherefirst2/pretty-pdf": ("GPL-3.0", ["GPL-3.0.txt"]),
    # round 11 (receipts: point-of-sale, thermal and generated receipt prints)
    "godheaven/klib-pdf": ("Apache-2.0", ["Apache-2.0.txt", "NOTICE-klib-pdf.txt"]),
    "markmhendrickson/neotoma": ("MIT", ["MIT-neotoma.txt"]),
    # round 11 (typesetting and templating ecosystems' example prints)
    "hexaeder/PandocLetterTemplate": ("GPL-2.0", ["GPL-2.0.txt"]),
    "loustack17/simple_invoice": ("MIT", ["MIT-simple_invoice-loustack17.txt"]),
    "supaatwi/mr_pdf": ("Apache-2.0", ["Apache-2.0.txt"]),
    "mathialo/simpleinvoice": ("GPL-3.0", ["GPL-3.0.txt"]),
    "amunn/invoice-class": ("LPPL-1.3c", ["LPPL-1.3c.txt"]),
    # round 11 (English invoices found by file path)
    "instructit/llm_invoice": ("MIT", ["MIT-llm_invoice-instructit.txt"]),
    "Steby5/invoicePDF": ("MIT", ["MIT-invoicePDF-Steby5.txt"]),
    # round 11 (synthetic and fictional fixtures of AI / LLM document-extraction projects)
    "kleinph/typst-letter-pro-invoice": ("GPL-3.0-or-later", ["GPL-3.0.txt"]),
    "FoxitJohnny/SmartAP": ("MIT", ["MIT-SmartAP.txt"]),
    "instructor-ai/instructor": ("MIT", ["MIT-instructor.txt"]),
    # round 12 (typesetting tools' and AI-extraction projects' fictional prints, second wave)
    "LuizFelipeM/docuxtract": ("MIT", ["MIT-docuxtract.txt"]),
    "timgluz/versioneye-core": ("MIT", ["MIT-versioneye-core.txt"]),
    # round 13 (English invoices by file path, third wave)
    "cemre-2187/pdfkit-invoice-example": ("MIT", ["MIT-pdfkit-invoice-example-cemre.txt"]),
    "alexvervloet/multimodal-deep-dive": ("MIT", ["MIT-multimodal-deep-dive.txt"]),
    "dlpe/agentic": ("MIT", ["MIT-agentic-dlpe.txt"]),
    "R0bsaunders/free-pdf-invoice-generator": ("MIT", ["MIT-free-pdf-invoice-generator.txt"]),
    "pumkunga-dot/pdf-generation-service": ("MIT", ["MIT-pdf-generation-service-pumkunga.txt"]),
    # round 13 (Receipts, third wave)
    "jeesmon/receipt-generator": ("Apache-2.0", ["Apache-2.0.txt"]),
    # round 13 (documents bundled in packages on PyPI and npm)
    "pypi:bulkinvoicer": ("MIT", ["MIT-bulkinvoicer.txt"]),
    "pypi:gocept.printinvoices": ("ZPL-2.1", ["ZPL-2.1-gocept.printinvoices.txt"]),
    "pypi:pyfox-invoice": ("MIT", ["MIT-pyfox-invoice.txt"]),
    # round 13 (Invoices in other languages by file path, third wave)
    "123Matthias/KeySearch": ("GPL-3.0", ["GPL-3.0.txt"]),
    "christianpm-hub/Pagina_con_Odoo": ("Apache-2.0", ["Apache-2.0.txt"]),
    # round 13 (PDF and report libraries' committed example invoices, by ecosystem, third wave)
    "foliojs/pdfkit": ("MIT", ["MIT-pdfkit-foliojs.txt"]),
    "gehtsoft-usa/PDF.Flow.Examples": ("Apache-2.0", ["Apache-2.0.txt"]),
    "mikeshimura/goreport": ("MIT", ["MIT-goreport.txt"]),
    "jsreport/jsreport": ("MIT", ["MIT-jsreport-pdfjs.txt"]),
    "jobsta/reportbro-lib": ("AGPL-3.0", ["AGPL-3.0.txt"]),
    "re-port-flow/reportflow-examples": ("MIT", ["MIT-reportflow-examples.txt"]),
    "diorcety/typst-business-templates": ("MIT", ["MIT-typst-business-templates.txt"]),
    "pymupdf/PyMuPDF-Utilities": ("AGPL-3.0", ["AGPL-3.0.txt"]),
    # round 13 (documents bundled in earlier releases of PyPI and npm packages)
    "pypi:py-invoices": ("MIT", ["MIT-py-invoices.txt"]),
    "npm:receipt-scanner": ("MIT", ["MIT-receipt-scanner.txt"]),
    # round 13 (document-generation services' and document-automation SDKs' example invoices)
    "ApryseSDK/pdftron-go": ("MIT", ["MIT-pdftron-go.txt"]),
    "boldsign/boldsign-python-sdk": ("MIT", ["MIT-boldsign-python-sdk.txt"]),
    # round 13 (open leads of round 13's first searches)
    "jofas/BAREKEEPER": ("MIT", ["MIT-BAREKEEPER.txt"]),
    # round 14 (Document-generation services, report engines and e-signature SDKs: the leads round 13 left)
    "samber/invoice-as-a-service": ("MIT", ["MIT-invoice-as-a-service.txt"]),
    # round 15 (Typst Universe packages: examples rendered here from the typst/packages monorepo)
    "typst/packages": ("Apache-2.0", ["Apache-2.0-typst-pkg-rubrol-invoice.txt"]),
    # round 15 (r15typst: Typst invoice templates in their own repositories, rendered here)
    "cappuccinocosmico/typst-invoice-contracting": ("MIT-0", ["MIT-0-typst-invoice-contracting.txt"]),
    "semla/PTA-invoice-typst": ("MIT", ["MIT-PTA-invoice-typst.txt"]),
    "storopoli/invoice": ("MIT", ["MIT-storopoli-invoice.txt"]),
    "mgoulao/typy": ("Apache-2.0", ["Apache-2.0-typy.txt"]),
    # round 15 (r15latex: LaTeX invoice templates' and generators' example sources, rendered here)
    "b1rd33/pdflatex-skill": ("MIT", ["MIT-pdflatex-skill.txt"]),
    "BadlyDrawnBoy/mad-invoice-mcp": ("Apache-2.0", ["Apache-2.0.txt"]),
    # round 15 (documents rendered here from example sources: other languages than English and German)
    "mkpoli/typst-inboisu": ("MIT-0", ["MIT-0-typst-inboisu.txt"]),
    "vartur/facturelibre": ("MIT", ["MIT-facturelibre.txt"]),
    "puppetmaster886/arca-factura-pdf": ("MIT", ["MIT-arca-factura-pdf.txt"]),
    # round 15 (r15scripts: invoice generators' example scripts and data, rendered here)
    "CiCiApp/PyInvoice": ("MIT", ["MIT-PyInvoice.txt"]),
    "tai271828/pyinvoicer": ("BSD-3-Clause", ["BSD-3-Clause-pyinvoicer.txt"]),
    "bikeshedder/dinbrief": ("MIT", ["MIT-dinbrief.txt"]),
    # round 15 (HTML/CSS invoice and receipt templates rendered with Chromium)
    "ColorlibHQ/AdminLTE": ("MIT", ["MIT-AdminLTE.txt"]),
    "PlainAdmin/plain-free-bootstrap-admin-template": ("MIT", ["MIT-plain-free-bootstrap-admin-template.txt"]),
    "ColorlibHQ/gentelella": ("MIT", ["MIT-gentelella.txt"]),
    "mailgun/transactional-email-templates": ("MIT", ["MIT-transactional-email-templates.txt"]),
    "ColorlibHQ/email-templates": ("MIT", ["MIT-colorlib-email-templates.txt"]),
    "sendgrid/email-templates": ("MIT", ["MIT-sendgrid-email-templates.txt"]),
    "rockdaboot/invoice-html5-to-pdf": ("MIT", ["MIT-invoice-html5-to-pdf.txt"]),
    "rbisewski/pyhtml-invoice": ("MIT", ["MIT-pyhtml-invoice.txt"]),
    # round 16 (r16email: transactional e-mail templates and e-mail builders' examples, printed with Chromium)
    "sendwithus/templates": ("Apache-2.0", ["Apache-2.0-sendwithus-templates.txt"]),
    "usewaypoint/email-builder-js": ("MIT", ["MIT-email-builder-js.txt"]),
    # round 16 (r16intl: invoices and receipts in other languages than English and German, rendered here)
    "gw31415/typst-invoice-ja": ("MIT", ["MIT-typst-invoice-ja.txt"]),
    "SAT-CFDI/python-satcfdi": ("MIT", ["MIT-python-satcfdi.txt"]),
    "MateuszKubuszok/B2BInvoiceTexTemplate": ("GPL-2.0", ["GPL-2.0-B2BInvoiceTexTemplate.txt"]),
    "receiptline/receiptline": ("Apache-2.0", ["Apache-2.0-receiptline.txt"]),
    # round 16 (r16latex: LaTeX invoice classes' examples, rendered here or committed in the history)
    "mkropat/dapper-invoice": ("MIT", ["MIT-dapper-invoice.txt"]),
    "sekvy/invoice-template": ("MIT", ["MIT-sekvy-invoice-template.txt"]),
    "mor1/minvoice": ("MIT", ["MIT-minvoice.txt"]),
    "Gab0/dapper-invoice": ("MIT", ["MIT-gab0-dapper-invoice.txt"]),
    # round 16 (r16gen: invoice generators' example scripts and data, rendered here, second wave)
    "pypi:billwright": ("Apache-2.0", ["Apache-2.0-billwright.txt", "NOTICE-billwright.txt"]),
    "adamwojt/invoicepy": ("MIT", ["MIT-invoicepy.txt"]),
    "pypi:facturization": ("MIT", ["MIT-facturization.txt"]),
    "tgrandjean/french-invoice-generator": (
        "Apache-2.0",
        ["Apache-2.0-french-invoice-generator.txt", "Apache-2.0.txt"],
    ),
    "radzhome/fedex-commercial-invoice": ("BSD-3-Clause", ["BSD-3-Clause-fedex-commercial-invoice.txt"]),
    # round 16 (r16admin: admin-dashboard templates' invoice pages printed with Chromium)
    "dropways/deskapp": ("MIT", ["MIT-deskapp.txt"]),
    "tafcoder/sleek-dashboard": ("MIT", ["MIT-sleek-dashboard.txt"]),
    "fexend/fexend-html": ("Apache-2.0", ["Apache-2.0-fexend-html.txt"]),
    "avidtemplates/tailbreeze": ("MIT", ["MIT-tailbreeze.txt"]),
    # round 17 (r17repos: a sweep of repositories named for invoices and receipts)
    "swedev/klartex": ("MIT", ["MIT-klartex.txt"]),
    "SlimTim10/easy-invoice-maker": ("BSD-3-Clause", ["BSD-3-Clause-easy-invoice-maker.txt"]),
    # round 18 (r18wk: wkhtmltopdf / pandoc invoice templates and generators)
    "eliplaying/invoice-boilerplate": ("GPL-2.0", ["GPL-2.0.txt"]),
    "SudoQ/yig": ("MIT", ["MIT-yig.txt"]),
    "maxpowx/invoice-boilerplate": ("GPL-2.0", ["GPL-2.0.txt"]),
    "louiskounios/simple-invoice-generator": ("MIT", ["MIT-simple-invoice-generator.txt"]),
    # round 17 (r17htmlpdf: HTML/CSS-to-PDF and print-CSS tools' example invoices, rendered here)
    "simonmichael/hledger": ("GPL-3.0", ["GPL-3.0.txt"]),
    "stianfro/invoicers": ("MIT", ["MIT-invoicers.txt"]),
    "aplgr/html2pdf-service": ("MIT", ["MIT-html2pdf-service.txt"]),
    "klimavojtech2002/modern-document": ("MIT", ["MIT-modern-document.txt"]),
    # round 18 (r18office: office-format invoice templates with their example data, printed with LibreOffice)
    "tryton/relatorio": ("GPL-3.0-or-later", ["GPL-3.0.txt", "NOTICE-relatorio.txt"]),
    "akretion/factur-x-libreoffice-extension": ("GPL-3.0", ["GPL-3.0.txt"]),
    "Pityrias/zugferd-facturx-rechnungen-profil-en16931": ("GPL-3.0", ["GPL-3.0.txt"]),
    "nextcloud/web-installer": ("AGPL-3.0-or-later", ["AGPL-3.0.txt", "NOTICE-nextcloud-templates-credits.md"]),
    # round 18 (r18code: PHP and Ruby invoice generators' and receipt printers' examples, rendered here)
    "artkonekt/pdf-invoice": ("GPL-2.0-or-later", ["GPL-2.0.txt"]),
    "PHP-Einfach/pdf-rechnung": ("LGPL-3.0", ["LGPL-3.0.txt", "GPL-3.0.txt"]),
    "adiuvaris/ReportLib": ("LGPL-3.0", ["LGPL-3.0-ReportLib.txt", "GPL-3.0.txt"]),
    "receiptline/receiptio": ("Apache-2.0", ["Apache-2.0-receiptio.txt"]),
    # round 18 (r18revisit: earlier rounds' "no print committed" refusals, rendered here)
    "Kowts/pdf-invoices-php": ("MIT", ["MIT-pdf-invoices-php.txt"]),
    "seabrus/osbb-invoice-template": ("MIT", ["MIT-osbb-invoice-template.txt"]),
    "danilomiraba-glitch/sri-ride": ("MIT", ["MIT-sri-ride.txt"]),
    "LeanerCloud/invoicr": ("MIT", ["MIT-invoicr-leanercloud.txt"]),
    "Kevinci/fast-pdf": ("MIT", ["MIT-fast-pdf.txt"]),
    "earonesty/boxpdf": ("MIT", ["MIT-boxpdf.txt"]),
    "Himaan1998Y/pretext-pdf": ("MIT", ["MIT-pretext-pdf.txt"]),
    "romulocrj/js_pdf": ("Apache-2.0", ["Apache-2.0.txt", "NOTICE-js_pdf.txt"]),
    "surajthaqurie/html-pdf-engine": ("MIT", ["MIT-html-pdf-engine.txt"]),
    "Natifishman/hebrew-docx": ("MIT", ["MIT-hebrew-docx.txt"]),
    "madeindjs/invoice-generator-pdf": ("MIT", ["MIT-invoice-generator-pdf.txt"]),
    # round 18 (r18xml: national e-invoice formats' example XML rendered with their standard stylesheets)
    "OCA/l10n-italy": ("AGPL-3.0", ["AGPL-3.0.txt"]),
    "Greenstep/rfinvoice": (
        "MIT",
        ["MIT-rfinvoice.txt", "GPL-2.0-or-later-MLInvoice.txt", "GPL-2.0-MLInvoice-gpl.txt"],
    ),
    "phax/ph-ebinterface": ("Apache-2.0", ["Apache-2.0.txt"]),
    "skills-il/localization": ("MIT", ["MIT-skills-il-localization.txt"]),
    # round 19 (r19leads: earlier rounds' leads and PyPI generators' bundled examples, rendered here)
    "mariusklocke/docnamic": ("MIT", ["MIT-docnamic.txt"]),
    "LambdaColdStorage/envois": ("MIT", ["MIT-envois.txt"]),
    "pypi:yinv": ("MIT", ["MIT-yinv.txt"]),
    "pypi:eu-einvoice": ("MIT", ["MIT-eu-einvoice.txt"]),
    # round 19 (r19ctan: CTAN example sources shipped in Debian's TeX Live -doc packages, rendered here)
    "debian:texlive-latex-extra-doc": ("LPPL-1.3c", ["LPPL-1.3c.txt"]),
    # round 19 (r19xml: e-invoice example XML rendered with open visualisation stylesheets)
    "phax/phive-rules": (
        "Apache-2.0",
        ["Apache-2.0-phive-rules.txt", "Apache-2.0-xrechnung-visualization.txt"],
    ),
    "hkutluay/UblTr": ("MIT", ["MIT-UblTr.txt", "BSD-3-Clause-eFaturaXSLT.txt"]),
    # round 19 (r19rcpt: receipts rendered from their authors' example sources)
    "digitickets/verifone-xml-receipt-renderer": ("MIT", ["MIT-verifone-xml-receipt-renderer.txt"]),
    # round 20 (r20tools: invoices rendered with document toolchains no earlier round used, and a committed print)
    "arachan/invoice_adoc": ("MIT", ["MIT-invoice_adoc.txt"]),
    "pfaivre/quittance-pro": ("MIT", ["MIT-quittance-pro.txt"]),
    # round 20 (r20js: invoices and receipts rendered by JavaScript/TypeScript projects from their fictional example data)
    "opencollective/opencollective-pdf": ("MIT", ["MIT-opencollective-pdf.txt"]),
    # round 20 (r20sheet: invoices kept as spreadsheets or office documents, printed with LibreOffice)
    "lka/excel2zugferd": ("Apache-2.0", ["Apache-2.0-excel2zugferd.txt"]),
    "aspose-words/Aspose.Words-for-.NET": ("MIT", ["MIT-Aspose.Words-for-.NET.txt"]),
    "PHPOffice/PhpSpreadsheet": ("MIT", ["MIT-PhpSpreadsheet.txt"]),
    "gflohr/e-invoice-eu": ("WTFPL", ["WTFPL-e-invoice-eu.txt"]),
    # round 21 (r21einv: e-invoice example XML printed with an open visualisation stylesheet)
    "stacking-hq/ksef2": ("MIT", ["MIT-ksef2.txt"]),
    "josemmo/einvoicing": ("MIT", ["MIT-einvoicing.txt"]),
    "horstoeko/zugferd": ("MIT", ["MIT-horstoeko-zugferd.txt"]),
    # round 21 (r21sdk: sample invoices of document SDKs' example repositories)
    "groupdocs-viewer/GroupDocs.Viewer-for-.NET": ("MIT", ["MIT-GroupDocs.Viewer-for-.NET.txt"]),
    # round 22 (r22deb: CTAN example sources shipped in Debian's texlive-publishers-doc, rendered here)
    "debian:texlive-publishers-doc": ("LPPL-1.3c", ["LPPL-1.3c.txt", "LPPL-1.3c-factures-belges-sebille.txt"]),
    # round 22 (r22ubl: e-invoice example XML printed with KoSIT's XRechnung visualisation)
    "invopop/gobl.ubl": ("Apache-2.0", ["Apache-2.0-gobl.ubl.txt", "Apache-2.0-xrechnung-visualization.txt"]),
    "phax/en16931-cii2ubl": (
        "Apache-2.0",
        ["Apache-2.0-en16931-cii2ubl.txt", "Apache-2.0-xrechnung-visualization.txt"],
    ),
    "florin-szilagyi/efactura-anaf-ts-sdk": (
        "MIT",
        ["MIT-efactura-anaf-ts-sdk.txt", "EUPL-1.2.txt", "Apache-2.0-xrechnung-visualization.txt"],
    ),
    "slovak-egov/einvoice": (
        "EUPL-1.2",
        ["EUPL-1.2-slovak-egov-einvoice.txt", "Apache-2.0-xrechnung-visualization.txt"],
    ),
    "jeffreybulanadi/Singapore-BIS-Billing3": (
        "MIT",
        ["MIT-Singapore-BIS-Billing3.txt", "Apache-2.0-xrechnung-visualization.txt"],
    ),
    # round 23 (r22rcpt: receipts rendered from their authors' example sources)
    "hidemikimura/receipt-html-to-pdf": ("MIT", ["MIT-receipt-html-to-pdf.txt"]),
    "mohammadraufzahed/folio": ("MIT", ["MIT-folio.txt"]),
    "receiptline/receiptjs": ("Apache-2.0", ["Apache-2.0-receiptjs.txt"]),
    # round 24 (r24viz: e-invoice example XML printed with open visualisation stylesheets other than KoSIT's)
    "unimaze/unimaze-peppol-stylesheets": ("Apache-2.0", ["Apache-2.0-unimaze-peppol-stylesheets.txt"]),
    "financica/ubl-viewer": ("MIT", ["MIT-ubl-viewer.txt", "Apache-2.0-unimaze-peppol-stylesheets.txt"]),
    "invopop/gobl.cii": ("Apache-2.0", ["Apache-2.0-gobl.cii.txt", "Apache-2.0-bfo-publisher-extra.txt"]),
    "Logius-standaarden/basisfactuur-rijk": (
        "W3C",
        ["W3C-basisfactuur-rijk.txt", "Apache-2.0-unimaze-peppol-stylesheets.txt"],
    ),
    # round 24 (r24gen: generator libraries' invoice examples rendered with the library itself)
    "pypi:facturex": ("MIT", ["MIT-facturex.txt"]),
    "eboukamza/simple-facture": ("MIT", ["MIT-simple-facture.txt"]),
    "an-empty-string/oig": ("MIT", ["MIT-oig.txt"]),
    # round 25 (r25einv: e-invoice example XML printed with the repository's own stylesheet)
    "pontsoleil/EIPA": ("MIT", ["MIT-EIPA.txt"]),
    # round 25 (r25rcpt: receipts rendered from their authors' test and preview data)
    "openpetra/openpetra": ("GPL-3.0-or-later", ["GPL-3.0.txt"]),
    "indico/indico": ("MIT", ["MIT-indico.txt"]),
    # round 26 (r26erp: ERP and ticketing software printing invoices from their own test data)
    "pypi:trytond-account-invoice": ("GPL-3.0-or-later", ["GPL-3.0.txt", "NOTICE-trytond-account-invoice.txt"]),
    "pypi:trytond-sale": ("GPL-3.0-or-later", ["GPL-3.0.txt", "NOTICE-trytond-sale.txt"]),
    "pypi:pretix": ("AGPL-3.0-only", ["AGPL-3.0-only-pretix.txt"]),
    # round 26 (r26xslt: e-invoice XML printed with the stylesheet it carries)
    "ByLegenS/PHP-E-Fatura-Imzalama-Araci": ("GPL-3.0", ["GPL-3.0.txt"]),
    # round 27 (r27bill: billing apps printing invoices and receipts from their own test data)
    "pypi:django-facturation-fr": ("AGPL-3.0-or-later", ["AGPL-3.0.txt"]),
    "pypi:django-ticketbai": ("MIT", ["MIT-django-ticketbai.txt"]),
    "pypi:django-xrechnung": ("BSD-3-Clause", ["BSD-3-Clause-django-xrechnung.txt"]),
    # round 27 (r27spec: business applications printing their own specimen invoices)
    "hrpro9/dolibarr16": ("GPL-3.0-or-later", ["GPL-3.0.txt", "NOTICE-dolibarr.txt"]),
    # round 28 (r28py: PyPI e-invoice and invoicing packages printing their own test fixtures and examples)
    "pypi:cfdi-pdf": ("MIT", ["MIT-cfdi-pdf.txt"]),
    "pypi:xfep-pdf": ("Apache-2.0", ["Apache-2.0-xfep-pdf.txt"]),
    "pypi:edf-tool": ("MIT", ["MIT-edf-tool.txt"]),
    "pypi:openfatture": ("MIT", ["MIT-openfatture.txt"]),
    # round 28 (r28js: invoices JavaScript widgets and Go tools print from their own example data)
    "gristlabs/grist-widget": ("Apache-2.0", ["Apache-2.0.txt"]),
    "Lesterpig/invoice": ("GPL-3.0", ["GPL-3.0.txt"]),
    # round 29 (r29intl: invoices in languages the set lacks, printed by packages from their own tests)
    "pypi:zatca-tools-sdk": ("MIT", ["MIT-zatca-tools-sdk.txt", "NOTICE-zatca-tools-sdk.txt"]),
    # round 29 (r29rcpt: receipts that business software renders from its own test and preview data)
    "saleor/apps": ("BSD-3-Clause", ["BSD-3-Clause-saleor-apps.txt"]),
    # round 30 (r30pos: receipts that point-of-sale and receipt-printing software renders from its own example data)
    "receipt-print-hq/escpos-tools": ("MIT", ["MIT-escpos-tools.txt"]),
    # round 30 (r30einv: e-invoice example XML printed with a viewer new to the set)
    "alvarobp/facturae_print": ("MIT", ["MIT-facturae-print.txt"]),
    "invopop/gobl.fatturapa": ("Apache-2.0", ["Apache-2.0-gobl.fatturapa.txt", "BSD-3-Clause-fe-stl.txt"]),
    # round 30 (r30erp: invoices and receipts ERP and billing applications print from their own demo data)
    "FrontAccountingERP/FA": ("GPL-3.0-or-later", ["GPL-3.0-or-later-FrontAccounting.txt"]),
    "fearless359/simpleinvoices": ("GPL-3.0", ["GPL-3.0.txt"]),
    # round 31 (r31lang: invoices in languages the set lacked: Croatian, Lithuanian)
    "karabaja4/racuni": ("MIT", ["MIT-racuni.txt"]),
    "pypt/shaibos": ("LGPL-2.1", ["LGPL-2.1-shaibos.txt"]),
    # round 31 (r31shop: invoices that e-commerce and billing software renders from its own test data)
    "flexprice/flexprice": ("AGPL-3.0", ["AGPL-3.0-flexprice.txt"]),
    # round 31 (r31acct: invoices that accounting applications print from their own demo data)
    "pypi:lino-book": ("AGPL-3.0-only", ["AGPL-3.0.txt", "NOTICE-lino-book.txt"]),
    # round 32 (r32deb: invoices GnuCash prints with its own reports from its example scripts' and a GnuCash test book's data)
    "debian:python3-gnucash": ("GPL-2.0-or-later", ["GPL-2.0.txt", "GPL-2.0-or-later-gnucash-debian-copyright.txt"]),
    "sdementen/piecash": ("MIT", ["MIT-piecash.txt"]),
    # round 32 (r32lang: invoices in languages the set lacks, third wave: Hungarian)
    "nervatura/nerva2py": ("LGPL-3.0", ["LGPL-3.0-nerva2py.txt", "LGPL-3.0.txt", "GPL-3.0.txt"]),
    # round 32 (r32pkg: invoice packages printing from their own tests)
    "gselderslaghs/pdf-invoice-util": ("MIT", ["MIT-pdf-invoice-util.txt"]),
    # round 33 (r33lang: invoices in languages the set lacks, fourth wave: Indonesian)
    "Ak-sara/aksara-writer": ("BSD-3-Clause", ["BSD-3-Clause-aksara-writer.txt"]),
    # round 33 (r33fop: an XSL-FO invoice example printed with Debian's Apache FOP)
    "SingingBush/barcode4j": ("Apache-2.0", ["Apache-2.0.txt", "NOTICE-barcode4j.txt"]),
    # round 33 (r33rcpt: receipts rendered from their projects' own example data)
    "flowglad/flowglad": ("AGPL-3.0", ["AGPL-3.0-flowglad.txt"]),
    # round 34 (r34einv: the Factur-X example invoices of AFNOR XP Z12-014, French e-invoicing reform)
    "lunatech-labs/lunatech-pa-electronic-invoices": ("Apache-2.0", ["Apache-2.0.txt"]),
    # round 36 (r36leads: a Slovak PAY by square invoice a small tool prints from its example data)
    "Wavekin/pay-by-square-invoice-generator": ("MIT", ["MIT-pay-by-square-invoice-generator.txt"]),
    # round 36 (r36dms: document-management and OCR projects' own sample documents)
    "papra-hq/papra": ("AGPL-3.0-or-later", ["AGPL-3.0.txt"]),
    # round 36 (r36report: invoices report engines print from their own example data)
    "dynamicreports/dynamicreports": (
        "LGPL-3.0-or-later",
        ["LGPL-3.0.txt", "GPL-3.0.txt", "NOTICE-dynamicreports.txt"],
    ),
    # round 37 (r37jasper: JRXML invoice examples printed from their own data)
    "SIMITGROUP/phpjasperxml": ("BSD-3-Clause", ["BSD-3-Clause-phpjasperxml.txt"]),
    # round 39 (r39mpdf: PHP invoice libraries and tools printing their own example data)
    "mzur/InvoiScript": ("MIT", ["MIT-InvoiScript.txt"]),
    "8ctopus/pigeon-invoice": ("MIT", ["MIT-pigeon-invoice.txt"]),
    "peterdevpl/pdf-generators": ("MIT", ["MIT-pdf-generators.txt"]),
    # round 40 (r40xslt: e-invoice visualisers printing their formats' own examples)
    "kzolti/nav-invoicedata-to-html": (
        "Apache-2.0",
        ["Apache-2.0-nav-invoicedata-to-html.txt"],
    ),
    # round 41 (r41langs: invoice libraries in Ruby, Go, Rust, Java and others printing their own examples)
    "webtranslateit/payday": ("MIT", ["MIT-payday.txt"]),
    "prasdud/go-invoice": ("MIT", ["MIT-go-invoice-prasdud.txt"]),
    # round 41 (r41einv: Danish OIOUBL examples printed with the Danish Agency for Digitisation's
    # own presentation stylesheet, as n4s-linux/n4s vendors it)
    "n4s-linux/n4s": ("GPL-3.0", ["GPL-3.0-n4s.txt"]),
    "invopop/gobl.dk.oioubl": ("Apache-2.0", ["Apache-2.0-gobl.dk.oioubl.txt", "GPL-3.0-n4s.txt"]),
    # round 42 (r42leads: earlier rounds' open leads worked through once more)
    "mheers/godtemplate": ("MIT", ["MIT-godtemplate.txt"]),
    # round 43 (r43bill: billing platforms' own committed invoice renders of their test data)
    "getlago/lago-api": ("AGPL-3.0", ["AGPL-3.0.txt"]),
    # round 43 (r43llm: example and test invoices of LLM / document-AI extraction libraries)
    "jsoma/natural-pdf": ("MIT", ["MIT-natural-pdf.txt"]),
}


def test_every_source_has_its_licence_text_and_one_commit():
    licences = HELDOUT.parent / "real" / "LICENSES"
    commits: dict[str, set[str]] = {}
    for doc in DOCUMENTS:
        source = doc["source"]
        licence, files = LICENCE_FILES[source_name(source)]
        assert source["licence"] == licence, doc["id"]
        assert all((licences / name).is_file() for name in files), doc["id"]
        assert source_name(source) in (licences / "README.md").read_text(encoding="utf-8"), doc["id"]
        commits.setdefault(source_name(source), set()).add(source_pin(source))
    assert all(len(c) == 1 for c in commits.values())


def test_documents_jsonl_is_what_the_build_derives(monkeypatch):
    from vetq.eval.golden.real import build as tuned_build

    # the held-out build.py points the tuned set's builder at its folder: undo it after
    # this test, so that tests of the tuned set run after it in this process still see theirs
    for name in ("HERE", "LABELS", "DOCUMENTS", "README", "TEXTS", "PDFS"):
        monkeypatch.setattr(tuned_build, name, getattr(tuned_build, name))
    real_build = _heldout_script("build").real_build
    labels = real_build.load_labels()
    assert [label["id"] for label in labels] == [doc["id"] for doc in DOCUMENTS]
    assert (HELDOUT / "documents.jsonl").read_text(encoding="utf-8") == real_build.documents_jsonl(labels)


# The held-out figures the README records (544 documents: the classes of rounds 22, 24 to
# 26, 29 to 31, 33, 36, 38 to 41 fixed, rounds 23, 27, 28, 32, 34, 35, 37, 42 and 43 measured): two prints that conflict with themselves (pyafipws, the spedviewer
# DANFE); goblhtml's Arabic print, whose mirrored tax row ("1,336.13  5%  26,722.50  VAT") passed
# before round 16 only because a page break joined its base's line to "Page 1 of 2", which
# made the base a page figure (a page break now ends a line); one of round 18: a
# FatturaPA print whose 10 % document discount is printed as a percentage only (its
# Finvoice print, an advance payment's phrase a line above its figure beside a word saying
# the tax is in it, passes since test 130); and round 25's JP PINT print, whose tax table's header line also holds
# the payment column's means code ("税額  30  PaymentID"), read as a tax of 30, so the
# record's sums are not agreed and the tax table's "合計金額" rivals the total; and round 39's
# fuel-balance CFDI, whose fuel-card statement's sum row ("Total:  $246.13 ...") rivals the
# invoice's one-cent total; and round 41's Danish car invoice, whose registration duty's row
# names a code before its figure ("Afgift (Kategori: Excise, Pligtkode: 0, ...)  78169.00")
# and whose VAT base ("Momsgrundlag", the lines plus the duty less the exempt part) is not
# its lines' sum.
RECORDED_FALSE_ALARM_DOCUMENTS = 7
RECORDED_FALSE_ALARM_FIELDS = 10


def test_the_cli_chooses_the_set():
    assert ev._parser().parse_args(["--real"]).real_set == "tuned"
    assert ev._parser().parse_args(["--real", "--set", "heldout"]).real_set == "heldout"


@pytest.fixture(scope="module")
@starts_processes
def heldout_report(tmp_path_factory):
    """The held-out set through the queue, as `vetq eval --real --set heldout` runs it."""
    from tests.test_real_eval import run_through_the_queue

    return run_through_the_queue(tmp_path_factory.mktemp("heldout-eval-home"), DOCUMENTS)


@pytest.mark.processes
def test_the_heldout_eval_runs_and_computes_its_catch(heldout_report):
    report = heldout_report
    assert report.errors == []
    assert report.documents == len(DOCUMENTS)
    caught, total = report.catch()
    gated = [c for c in re_.all_corruptions(DOCUMENTS) if c.kind in re_.CORRUPTION_KINDS]
    assert total == len(gated) and total > 0
    assert report.catch_rate == round(caught / total, 4)
    # Issue 14's catch target is met on every round: asserted.
    assert report.catch_rate >= re_.DEFAULT_MIN_CATCH, report.to_text()
    # Its false-alarm targets are not met on the fresh documents of round 2 (README): no
    # more false alarms than recorded there, so a change that adds one fails here; lower
    # these as classes are fixed.
    assert len(report.false_alarm_docs) <= RECORDED_FALSE_ALARM_DOCUMENTS, report.to_text()
    assert len(report.false_alarms) <= RECORDED_FALSE_ALARM_FIELDS, report.to_text()


# --- a round built from its own sources only -------------------------------------------------
def _source_repo(tmp_path: Path, pdf: bytes) -> str:
    """A git copy of one repository holding `invoice.pdf`, laid out as the sources folder
    holds them; returns the commit."""
    import subprocess

    repo = tmp_path / "sources" / "example+invoices"
    repo.mkdir(parents=True)
    (repo / "invoice.pdf").write_bytes(pdf)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "invoice.pdf"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "example"], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


def _derive_round(derive, tmp_path, monkeypatch, extra_candidates, extra_labels=()) -> list[dict]:
    """derive.py --round 99 over the set's candidates and labels plus the extra ones; the
    labels it writes, after the set's own rows (which it must keep as they are)."""
    old_labels = (HELDOUT / "labels.jsonl").read_text(encoding="utf-8")
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_text(
        (HELDOUT / "candidates.jsonl").read_text(encoding="utf-8")
        + "".join(json.dumps(c) + "\n" for c in extra_candidates),
        encoding="utf-8",
    )
    labels = tmp_path / "labels.jsonl"
    labels.write_text(old_labels + "".join(json.dumps(row) + "\n" for row in extra_labels), encoding="utf-8")
    monkeypatch.setattr(derive, "CANDIDATES", candidates)
    monkeypatch.setattr(derive, "LABELS", labels)
    assert derive.main(["--round", "99", "--sources", str(tmp_path / "sources")]) == 0
    written = labels.read_text(encoding="utf-8")
    assert written.startswith(old_labels)  # every earlier row kept, in its order
    return [json.loads(line) for line in written[len(old_labels) :].splitlines()]


def _example_candidate(commit: str, doc_id: str, round_: int) -> dict:
    from tests import pdfs

    return {
        "id": doc_id,
        "repo": "example/invoices",
        "commit": commit,
        "path": "invoice.pdf",
        "licence": "MIT",
        "language": "en",
        "kind": "invoice",
        "currency": "GBP",
        "round": round_,
        "truth": dict(pdfs.DATA, line_items=None),
    }


@pytest.mark.processes  # git makes the source repository
def test_derive_round_labels_only_that_round_and_keeps_every_other_row(tmp_path, monkeypatch):
    from tests import pdfs

    derive = _heldout_script("derive")
    commit = _source_repo(tmp_path, pdfs.two_column_invoice(pages=1))
    fresh = _example_candidate(commit, "hinv-example-invoice", 99)
    rendered_again = _example_candidate(commit, "hinv-example-again", 99)
    rows = _derive_round(derive, tmp_path, monkeypatch, [fresh, rendered_again])
    assert [row["id"] for row in rows] == ["hinv-example-invoice"]  # the second: the same number and total
    assert rows[0]["truth"]["total"] == pdfs.DATA["total"] and rows[0]["source"]["commit"] == commit


@pytest.mark.processes  # git makes the source repository
def test_derive_round_drops_a_rendering_of_a_kept_document(tmp_path, monkeypatch):
    from tests import pdfs

    derive = _heldout_script("derive")
    commit = _source_repo(tmp_path, pdfs.two_column_invoice(pages=1))
    # a document of an earlier round (its source absent here) with the same number and total
    earlier = _example_candidate(commit, "hinv-example-earlier", 98)
    kept_row = {"id": earlier["id"], "truth": earlier["truth"]}
    rows = _derive_round(
        derive, tmp_path, monkeypatch, [earlier, _example_candidate(commit, "hinv-example-new", 99)], [kept_row]
    )
    assert [row["id"] for row in rows] == ["hinv-example-earlier"]


@pytest.mark.processes  # git makes the source repository
def test_derive_round_refuses_a_hand_label_the_text_does_not_hold(tmp_path, monkeypatch):
    from tests import pdfs

    derive = _heldout_script("derive")
    commit = _source_repo(tmp_path, pdfs.two_column_invoice(pages=1))
    wrong = {"id": "hinv-example-wrong", "repo": "example/invoices", "commit": commit, "path": "invoice.pdf"}
    wrong |= {"licence": "MIT", "language": "en", "kind": "invoice", "currency": None, "round": 99}
    wrong["truth"] = dict(pdfs.DATA, total=584.20, line_items=None)
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_text(json.dumps(wrong) + "\n", encoding="utf-8")
    labels = tmp_path / "labels.jsonl"
    labels.write_text("", encoding="utf-8")
    monkeypatch.setattr(derive, "CANDIDATES", candidates)
    monkeypatch.setattr(derive, "LABELS", labels)
    with pytest.raises(derive.LabelError, match=r"total 584\.2"):
        derive.main(["--round", "99", "--sources", str(tmp_path / "sources")])


def test_build_keep_absent_checks_what_it_has_and_keeps_the_rest(tmp_path, monkeypatch):
    from vetq.eval.golden.real import build as tuned_build

    for name in ("HERE", "LABELS", "DOCUMENTS", "README", "TEXTS", "PDFS"):
        monkeypatch.setattr(tuned_build, name, getattr(tuned_build, name))
    real_build = _heldout_script("build").real_build
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no git copy"):
        real_build.build(tmp_path / "empty", check=True)
    assert real_build.build(tmp_path / "empty", check=True, keep_absent=True) == []


def _archive_candidate(tmp_path: Path, pdf: bytes, doc_id: str, kind: str) -> dict:
    """A candidate inside a package archive (an sdist's tar.gz or a wheel's zip) kept in the
    sources' archives/ folder under its SHA-256, as a session that downloaded it keeps it."""
    import io
    import tarfile
    import zipfile

    member = "example_invoices-1.0/tests/data/invoice.pdf"
    buffer = io.BytesIO()
    if kind == "sdist":
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            info = tarfile.TarInfo(member)
            info.size = len(pdf)
            archive.addfile(info, io.BytesIO(pdf))
    else:
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr(member, pdf)
    return {
        "id": doc_id,
        "registry": "pypi",
        "package": "example-invoices",
        "version": "1.0",
        "archive": "https://files.pythonhosted.org/packages/example_invoices-1.0.tar.gz",
        "sha256": _kept_by_sha256(tmp_path / "sources" / "archives", buffer.getvalue()),
        "path": member,
        **_example_labels(),
    }


def _kept_by_sha256(folder: Path, data: bytes) -> str:
    """`data` kept in `folder` under its SHA-256, as a session keeps an archive or a render."""
    import hashlib

    sha256 = hashlib.sha256(data).hexdigest()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / sha256).write_bytes(data)
    return sha256


def _example_labels() -> dict:
    from tests import pdfs

    return {
        "licence": "MIT",
        "language": "en",
        "kind": "invoice",
        "currency": "GBP",
        "round": 99,
        "truth": dict(pdfs.DATA, line_items=None),
    }


@pytest.mark.parametrize("kind", ["sdist", "wheel"])
def test_derive_round_reads_a_document_inside_a_package_archive(tmp_path, monkeypatch, kind):
    from tests import pdfs

    derive = _heldout_script("derive")
    candidate = _archive_candidate(tmp_path, pdfs.two_column_invoice(pages=1), "hinv-example-packaged", kind)
    rows = _derive_round(derive, tmp_path, monkeypatch, [candidate])
    assert [row["id"] for row in rows] == ["hinv-example-packaged"]
    assert rows[0]["truth"]["total"] == pdfs.DATA["total"]
    source = rows[0]["source"]
    assert (source["package"], source["version"], source["sha256"]) == ("example-invoices", "1.0", candidate["sha256"])
    assert (source_name(source), source_pin(source)) == ("pypi:example-invoices", "1.0")


def test_a_package_archive_that_is_not_the_pinned_one_is_refused(tmp_path):
    from tests import pdfs
    from vetq.eval.golden.real import build as real_build

    candidate = _archive_candidate(tmp_path, pdfs.two_column_invoice(pages=1), "hinv-example-packaged", "sdist")
    sources = tmp_path / "sources"
    assert real_build.read_source(sources, candidate).startswith(b"%PDF")
    with pytest.raises(FileNotFoundError, match="no file"):
        real_build.read_source(sources, {**candidate, "path": "example_invoices-1.0/missing.pdf"})
    (sources / "archives" / candidate["sha256"]).write_bytes(b"another archive")
    with pytest.raises(ValueError, match="SHA-256"):
        real_build.read_source(sources, candidate)
    with pytest.raises(FileNotFoundError, match="no copy"):
        real_build.read_source(sources, {**candidate, "sha256": "0" * 64})


def test_derive_says_which_candidates_source_is_missing_or_not_the_pinned_one(tmp_path, monkeypatch, capsys):
    from tests import pdfs

    derive = _heldout_script("derive")
    candidate = _archive_candidate(tmp_path, pdfs.two_column_invoice(pages=1), "hinv-example-packaged", "sdist")
    (tmp_path / "sources" / "archives" / candidate["sha256"]).write_bytes(b"another archive")
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_text(json.dumps(candidate) + "\n", encoding="utf-8")
    monkeypatch.setattr(derive, "CANDIDATES", candidates)
    monkeypatch.setattr(derive, "LABELS", tmp_path / "labels.jsonl")
    assert derive.main(["--sources", str(tmp_path / "sources")]) == 2
    assert "hinv-example-packaged" in capsys.readouterr().err and not (tmp_path / "labels.jsonl").exists()


def _rendered_candidate(tmp_path: Path, pdf: bytes, doc_id: str) -> dict:
    """A candidate rendered here from a repository's example source (a Typst or LaTeX file
    whose authors commit no print), its PDF kept in the sources' renders/ folder under its
    SHA-256, as the session that rendered it keeps it."""
    return {
        "id": doc_id,
        "repo": "example/typst-invoice",
        "commit": "1" * 40,
        "path": "template/main.typ",
        "renderer": "typst 0.15.2 (PyPI)",
        "sha256": _kept_by_sha256(tmp_path / "sources" / "renders", pdf),
        **_example_labels(),
    }


def test_derive_round_reads_a_pdf_rendered_here_and_cites_its_source_and_renderer(tmp_path, monkeypatch):
    from tests import pdfs
    from vetq.eval.golden.real import build as real_build

    derive = _heldout_script("derive")
    candidate = _rendered_candidate(tmp_path, pdfs.two_column_invoice(pages=1), "hinv-example-rendered")
    rows = _derive_round(derive, tmp_path, monkeypatch, [candidate])
    assert [row["id"] for row in rows] == ["hinv-example-rendered"]
    assert rows[0]["truth"]["total"] == pdfs.DATA["total"]
    source = rows[0]["source"]
    assert (source["renderer"], source["sha256"]) == ("typst 0.15.2 (PyPI)", candidate["sha256"])
    assert (source_name(source), source_pin(source)) == ("example/typst-invoice", "1" * 10)
    row = real_build.readme_table([{**rows[0], "source": source}]).splitlines()[-1]
    assert "`template/main.typ` (rendered by typst 0.15.2 (PyPI))" in row
    assert "https://github.com/example/typst-invoice/blob/" + "1" * 40 + "/template/main.typ" in row


def test_a_rendered_pdf_that_is_not_the_pinned_one_is_refused(tmp_path):
    from tests import pdfs
    from vetq.eval.golden.real import build as real_build

    candidate = _rendered_candidate(tmp_path, pdfs.two_column_invoice(pages=1), "hinv-example-rendered")
    sources = tmp_path / "sources"
    assert real_build.read_source(sources, candidate) == pdfs.two_column_invoice(pages=1)
    (sources / "renders" / candidate["sha256"]).write_bytes(b"%PDF- another rendering")
    with pytest.raises(ValueError, match="SHA-256"):
        real_build.read_source(sources, candidate)
    with pytest.raises(FileNotFoundError, match=r"no copy of template/main\.typ rendered by typst"):
        real_build.read_source(sources, {**candidate, "sha256": "0" * 64})


def test_a_pdf_rendered_from_a_packages_release_cites_the_release(tmp_path):
    from tests import pdfs
    from vetq.eval.golden.real import build as real_build

    candidate = {
        "id": "hinv-example-package-rendered",
        "registry": "pypi",
        "package": "example-invoices",
        "version": "1.0",
        "path": "example/invoice.toml",
        "renderer": "example-invoices 1.0 with WeasyPrint 70.0 (PyPI)",
        "sha256": _kept_by_sha256(tmp_path / "sources" / "renders", pdfs.two_column_invoice(pages=1)),
        **_example_labels(),
    }
    assert real_build.read_source(tmp_path / "sources", candidate).startswith(b"%PDF")
    assert (source_name(candidate), source_pin(candidate)) == ("pypi:example-invoices", "1.0")
    assert real_build.source_url(candidate) == "https://pypi.org/project/example-invoices/1.0/"
    assert real_build.source_url({**candidate, "registry": "npm"}) == (
        "https://www.npmjs.com/package/example-invoices/v/1.0"
    )
    assert real_build.source_url({**candidate, "registry": "debian"}) == (
        "https://snapshot.debian.org/binary/example-invoices/"
    )
    with pytest.raises(ValueError, match="no registry this set cites"):
        real_build.source_url({**candidate, "registry": "cpan"})
