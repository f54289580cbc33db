"""Five kinds of clinical note, each assembled from sections whose wording, order and layout vary.

Besides PHI, the notes carry the hard negatives a de-identifier meets in real
text: drugs whose names look like people's names (``Allegra``, ``Lyrica``),
doses and ratios that look like dates (``5/325 mg``, ``1/2 tab``, ``BP
128/76``, strength ``5/5``), eponyms (``Parkinson's disease``, ``Foley
catheter``), lab tables and clock times.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from nlpbench.synth.builder import NoteBuilder, Phi
from nlpbench.synth.values import STATE_NAMES, Values

MEDICATIONS = (
    ("Allegra", "180 mg PO daily"), ("Lyrica", "75 mg PO BID"), ("Ativan", "0.5 mg PO q6h PRN anxiety"),
    ("Lasix", "40 mg PO daily"), ("Percocet", "5/325 mg 1-2 tabs PO q4-6h PRN pain"), ("Xanax", "0.25 mg PO TID"),
    ("Keppra", "500 mg PO BID"), ("Eliquis", "5 mg PO BID"), ("Zyrtec", "10 mg daily"), ("Norco", "5/325 mg q6h"),
    ("metoprolol tartrate", "25 mg PO BID"), ("lisinopril", "10 mg daily"), ("atorvastatin", "40 mg qHS"),
    ("aspirin", "81 mg daily"), ("metformin", "500 mg BID with meals"), ("Coumadin", "2.5 mg daily, goal INR 2-3"),
    ("Flomax", "0.4 mg qHS"), ("Synthroid", "88 mcg daily"), ("Colace", "100 mg BID"), ("Ambien", "5 mg qHS PRN"),
    ("Celexa", "20 mg daily"), ("Haldol", "0.5 mg IV q6h PRN agitation"), ("Lantus", "22 units SC qHS"),
    ("Augmentin", "875/125 mg PO BID x 7 days"), ("prednisone", "40 mg daily, taper by 10 mg every 3 days"),
    ("Tylenol", "650 mg q6h PRN"), ("Keflex", "500 mg QID"), ("Valtrex", "1 g TID"), ("Lovenox", "40 mg SC daily"),
    ("Bactrim DS", "1 tab BID"), ("Levaquin", "750 mg daily"), ("Reglan", "10 mg before meals"),
)  # fmt: skip
PROBLEMS = (
    "Parkinson's disease", "Crohn's disease", "Hodgkin lymphoma in remission", "Graves' disease",
    "Bell's palsy", "Barrett's esophagus", "Alzheimer's dementia", "Cushing's syndrome", "Raynaud phenomenon",
    "Hashimoto thyroiditis", "type 2 diabetes mellitus", "hypertension", "hyperlipidemia", "COPD",
    "atrial fibrillation", "chronic kidney disease stage 3", "congestive heart failure, EF 35%",
    "coronary artery disease s/p CABG x3", "obstructive sleep apnea on CPAP", "Guillain-Barre syndrome",
)  # fmt: skip
EXAM_FINDINGS = (
    "Strength 5/5 in all extremities.", "Motor strength 4+/5 in the left deltoid.", "2/6 systolic murmur at the LUSB.",
    "Babinski sign negative bilaterally.", "Murphy's sign positive.", "Homans sign negative.",
    "Foley catheter in place, draining clear urine.", "Romberg test negative.", "Reflexes 2+ and symmetric.",
    "Pain 7/10, sharp, non-radiating.", "Lungs clear to auscultation bilaterally.", "No JVD, no edema.",
    "Abdomen soft, non-tender, no rebound.", "Glasgow Coma Scale 15.", "Pupils 3 mm and reactive.",
)  # fmt: skip


#: Sentences of clinical prose; ``{d}`` is a date, ``{h}`` a hospital, ``{doc}`` a clinician, ``{c}`` a city.
PROSE = (
    "Review of systems is otherwise negative for fevers, chills, night sweats or weight loss.",
    "She denies chest pain, palpitations, orthopnea or paroxysmal nocturnal dyspnea.",
    "He reports intermittent dizziness when standing, worse in the morning, without syncope.",
    "The patient was started on IV ceftriaxone 1 g daily and transitioned to oral cefpodoxime on {d}.",
    "Cardiology was consulted and recommended continuing metoprolol and uptitrating lisinopril to 20 mg.",
    "An outside echocardiogram from {h} dated {d} showed moderate mitral regurgitation.",
    "Physical therapy evaluated the patient and recommended a rolling walker and home PT 2-3 times per week.",
    "Blood cultures from {d} remain no growth to date; urine culture grew E. coli > 100,000 CFU/mL.",
    "Her pain was controlled with Tylenol 650 mg q6h and oxycodone 5 mg q4h PRN, using 1-2 doses per day.",
    "Case management arranged VNA services; the family prefers a facility closer to {c}.",
    "Imaging from {d} was reviewed with {doc}, who agreed with conservative management.",
    "Hemoglobin A1c was 8.2% on {d}, up from 7.4% last year; insulin glargine was increased by 2 units.",
    "He was counseled on smoking cessation for 5 minutes and given a nicotine patch 21 mg/24 h.",
    "The wound was dressed with wet-to-dry gauze twice daily; no erythema or purulence was noted.",
    "Goals of care were discussed with the patient and family; the patient remains full code.",
    "Ophthalmology saw the patient on {d} and found no diabetic retinopathy.",
    "Diet was advanced to a 2 g sodium, carbohydrate-controlled diet, which was tolerated well.",
    "The patient ambulated 300 feet with standby assist and an O2 saturation of 94% on room air.",
    "A PICC line was placed by interventional radiology without complication and confirmed at the cavoatrial junction.",
    "Telemetry showed paroxysmal atrial fibrillation with rates to 130, converting spontaneously after 2 hours.",
    "Repeat chest radiograph on {d} showed interval improvement of the right lower lobe consolidation.",
    "Nephrology recommended holding the ACE inhibitor and avoiding NSAIDs and IV contrast for now.",
    "She was seen in the {c} emergency department twice last month for similar complaints.",
    "Home medications were reconciled with the pharmacy; the patient had stopped simvastatin 40 mg on her own.",
    "A swallow evaluation on {d} recommended a mechanical soft diet with thin liquids.",
    "The patient's sister, a nurse, asked about a second opinion at {h}.",
    "Magnesium was repleted with 2 g IV and potassium with 40 mEq PO; levels were normal the next morning.",
    "He has had three falls in the past 6 months, the last one on {d}, without head strike.",
    "Palliative care met with the family and provided information on hospice options near {c}.",
    "Colonoscopy on {d} by {doc} found two 4 mm sessile polyps, removed with cold snare.",
    "She walks her dog for 20 minutes twice a day and follows a Mediterranean diet.",
    "Influenza and pneumococcal vaccines were given on {d}; the COVID-19 booster is up to date.",
    "Spirometry showed FEV1 1.45 L (52% predicted) with an FEV1/FVC ratio of 0.61 after bronchodilator.",
    "The patient's weight was 84.2 kg on admission and 81.7 kg at discharge after diuresis of 3.5 L.",
    "Renal ultrasound showed no hydronephrosis; the bladder scan post-void residual was 120 mL.",
    "He was transfused 1 unit of packed red cells on {d} for a hemoglobin of 6.8 g/dL with appropriate rise.",
    "Sleep medicine at {h} will arrange a titration study; CPAP at 10 cm H2O was continued meanwhile.",
    "The insulin sliding scale was used 3-4 times daily with fingersticks between 140 and 260 mg/dL.",
    "Dermatology biopsied a 6 mm pigmented lesion on the left shoulder; results are pending.",
    "The patient understands the plan and agrees to return for worsening symptoms, fever > 101 F or bleeding.",
)


def _prose(n: Note, count: int) -> None:
    """A paragraph of clinical sentences, some naming a date, a hospital, a clinician or a city."""
    v = n.v
    for sentence in v.rng.sample(PROSE, count):
        n.b.say(
            sentence + " ",
            d=v.date(v.day(back=60), v.rng.choice((("MM/DD/YYYY", "M/D/YY"), ("MMMM D", "M/D"), ("MMMM D, YYYY",)))),
            h=v.hospital(), doc=v.titled_doctor(v.doctor()), c=v.city(),
        )  # fmt: skip
    n.b.add("\n")


@dataclass
class Note:
    """What a template needs: the builder, the values, and the note's patient."""

    b: NoteBuilder
    v: Values
    patient: tuple[str, str, str]
    sex: str
    age: int

    def pt(self, form: str | None = None) -> Phi:
        return self.v.name(self.patient, "patient", form)

    def heading(self, title: str) -> None:
        style = self.v.choice(("upper_colon", "title_colon", "upper", "underline"))
        if style == "upper_colon":
            self.b.line(f"\n{title.upper()}:")
        elif style == "title_colon":
            self.b.line(f"\n{title}:")
        elif style == "upper":
            self.b.line(f"\n{title.upper()}")
        else:
            self.b.line(f"\n{title}\n{'-' * len(title)}")


def _new_note(v: Values) -> Note:
    sex = v.choice("FM")
    return Note(NoteBuilder(), v, v.person(sex), sex, v.rng.randint(19, 97))


def _header(n: Note, title: str) -> None:
    v, b = n.v, n.b
    b.line(v.choice((title.upper(), title, f"*** {title.upper()} ***")))
    if v.chance(0.7):
        b.line(v.choice(("{h}", "{h} - {d}")), h=v.hospital(), d=v.department())
    b.line(
        v.choice(("Patient: {p}", "Patient Name: {p}", "NAME: {p}", "Pt: {p}")),
        p=n.pt(v.choice(("full", "last_first", "caps_last_first"))),
    )
    cue = v.choice(("MRN: ", "MRN ", "Medical Record #: ", "MR#: ", "Unit No: ", "Med Rec No. ", "Record number: "))
    b.line("{c}{i}", c=cue, i=v.identifier("medical_record"))
    dob = v.day(back=300) - timedelta(days=365 * n.age)
    b.line(v.choice(("DOB: {d}", "Date of Birth: {d}", "D.O.B. {d}")), d=v.date(dob))
    if v.chance(0.5):
        b.line(
            v.choice(("Acct #: {a}", "Account Number: {a}", "Encounter #: {a}", "FIN: {a}")), a=v.identifier("account")
        )
    if v.chance(0.3):
        b.line(
            v.choice(("Insurance Member ID: {h}", "Policy #: {h}", "Subscriber ID: {h}")), h=v.identifier("health_plan")
        )


def _medications(n: Note, count: int) -> None:
    v, b = n.v, n.b
    n.heading(v.choice(("Medications", "Discharge Medications", "Current Medications", "Meds")))
    for index, (drug, dose) in enumerate(v.rng.sample(MEDICATIONS, count), start=1):
        bullet = v.choice((f"{index}. ", "- ", "* ", ""))
        b.line(f"{bullet}{drug} {dose}")
    if v.chance(0.4):
        b.line("Take 1/2 tablet of metoprolol if HR < 60. Hold Lasix if SBP < 100.")


def _problems(n: Note) -> None:
    v, b = n.v, n.b
    n.heading(v.choice(("Past Medical History", "PMH", "Problem List", "History")))
    for problem in v.rng.sample(PROBLEMS, v.rng.randint(3, 6)):
        if v.chance(0.3):
            b.line(
                v.choice(("- {p}, diagnosed {y}", "- {p} (since {y})", "- {p} {y}")), p=problem, y=v.year(v.day(3000))
            )
        else:
            b.line(f"- {problem}")
    if v.chance(0.5):
        b.line("- s/p appendectomy {y}", y=v.year(v.day(back=9000)))


def _social(n: Note) -> None:
    v, b = n.v, n.b
    n.heading(v.choice(("Social History", "SH", "Social")))
    city_state = v.city_state()
    sentences = [
        lambda: b.say(
            "Lives in {c} with {r}. ",
            c=Phi(city_state[0], "location", {"locationType": "city"}),
            r=v.choice(("her husband", "his wife", "a daughter", "roommates", "her partner")),
        ),
        lambda: b.say("Works as a {j} at {o}. ", j=v.profession(), o=v.organization()),
        lambda: b.say("Retired {j}. ", j=v.profession()),
        lambda: b.say("Born in {c}; moved to the US in {y}. ", c=v.country(), y=v.year(v.day(back=15000))),
        lambda: b.say("Recently traveled to {c}. ", c=v.country()),
        lambda: b.say("Former smoker, quit in {s}. Drinks 2-3 beers per week. ", s=v.season(v.day(back=3000))),
    ]
    for sentence in v.rng.sample(sentences, v.rng.randint(2, 4)):
        sentence()
    b.add("\n")


def _contacts(n: Note) -> None:
    v, b = n.v, n.b
    relative = v.person()
    relation = v.choice(("daughter", "son", "wife", "husband", "sister", "brother", "niece"))
    b.line(
        v.choice((
            "Emergency contact: {r} ({rel}), {p}",
            "Her {rel}, {r}, can be reached at {p}.",
            "Contact {rel} {r} at {p} with any questions.",
            "NOK: {r}, {rel}. Cell {p}",
        )),
        r=v.name(relative, "patient", v.choice(("full", "full", "middle"))), rel=relation, p=v.phone(),
    )  # fmt: skip
    if v.chance(0.5):
        b.line("Patient e-mail: {e}", e=v.email(n.patient))
    if v.chance(0.3):
        b.line("Home address: {a}", a=v.address())


def _vitals_and_labs(n: Note) -> None:
    v, b = n.v, n.b
    n.heading(v.choice(("Vital Signs", "Vitals", "Objective")))
    b.line(
        f"T {v.rng.choice(('98.6', '99.1', '100.4', '97.9'))}  HR {v.rng.randint(55, 110)}  "
        f"BP {v.rng.randint(100, 160)}/{v.rng.randint(60, 95)}  RR {v.rng.randint(12, 22)}  "
        f"SpO2 {v.rng.randint(90, 100)}% on {v.rng.choice(('RA', '2L NC'))}"
    )
    for finding in v.rng.sample(EXAM_FINDINGS, v.rng.randint(2, 4)):
        b.line(finding)
    if v.chance(0.6):
        n.heading("Labs")
        b.line(v.choice(("Date          WBC    Hgb    Plt    Cr", "DATE        WBC   HGB   PLT   CREAT")))
        day = v.day(back=10)
        for _ in range(v.rng.randint(2, 4)):
            cell = v.date(day, ("MM/DD/YYYY", "M/D/YY", "MM/DD", "YYYY-MM-DD"))
            pad = " " * max(1, 14 - len(cell.text))
            b.line(
                "{d}{pad}{w:<7}{h:<7}{p:<7}{c}", d=cell, pad=pad, w=f"{v.rng.uniform(3, 18):.1f}",
                h=f"{v.rng.uniform(7, 16):.1f}", p=str(v.rng.randint(90, 450)), c=f"{v.rng.uniform(0.6, 3.2):.2f}",
            )  # fmt: skip
            day = day.__class__.fromordinal(day.toordinal() + v.rng.randint(1, 3))
        b.line(f"INR 2.{v.rng.randint(0, 9)} at 06:{v.rng.randint(10, 59)}. Glucose {v.rng.randint(80, 300)} mg/dL.")


def _signature(n: Note, role: str = "Attending") -> None:
    v, b = n.v, n.b
    doctor = v.doctor()
    b.line()
    b.line(
        v.choice((
            "Electronically signed by {d} on {t}",
            f"{role}: {{d}}\nDate: {{t}}",
            "Dictated by: {d}   Dictated: {t}",
            "{d}\n{t}",
        )),
        d=v.titled_doctor(doctor), t=v.date(v.today),
    )  # fmt: skip
    if v.chance(0.5):
        b.line("Pager {p}  Fax: {f}", p=v.phone(), f=v.phone("fax"))
    if v.chance(0.3):
        b.line("cc: {d}", d=v.titled_doctor(v.doctor()))


def discharge_summary(v: Values) -> Note:
    n = _new_note(v)
    b = n.b
    admitted = v.day(back=20)
    discharged = admitted.fromordinal(admitted.toordinal() + v.rng.randint(1, 12))
    _header(n, "Discharge Summary")
    b.line(v.choice(("Admission Date: {a}", "Date of Admission: {a}", "Admitted: {a}")), a=v.date(admitted))
    b.line(v.choice(("Discharge Date: {d}", "Date of Discharge: {d}", "Discharged: {d}")), d=v.date(discharged))
    b.line("Attending: {d}", d=v.titled_doctor(v.doctor()))
    n.heading(v.choice(("History of Present Illness", "HPI", "History")))
    b.say(
        v.choice((
            "{p} is a {a}-year-old {s} with {x} who presented to {h} on {d} with {c}. ",
            "{title} {last} is a {a} yo {s} with a history of {x}, admitted {d} for {c}. ",
            "This {a}-year-old {s} ({p}) was transferred from {h} on {d} with {c}. ",
        )),
        p=n.pt("full"), last=n.pt("last"), title="Ms." if n.sex == "F" else "Mr.", a=v.age(n.age),
        s=v.choice(("woman", "man", "patient")),
        x=v.choice(PROBLEMS), h=v.hospital(), d=v.date(admitted), c=v.choice((
            "chest pain", "shortness of breath", "fever and dysuria", "a fall at home", "melena",
        )),
    )  # fmt: skip
    b.say(
        "Symptoms began {w} and worsened over {n} days. ",
        w=v.date(admitted.fromordinal(admitted.toordinal() - 3), ("dddd", "MMMM D", "M/D")),
        n=str(v.rng.randint(2, 6)),
    )
    b.line(
        "{pt} was seen by {d} of {dep} and started on heparin.",
        pt=n.pt("last") if v.chance(0.5) else "She" if n.sex == "F" else "He",
        d=v.titled_doctor(v.doctor()), dep=v.department(),
    )  # fmt: skip
    _prose(n, v.rng.randint(8, 13))
    _problems(n)
    n.heading("Hospital Course")
    b.line(
        "Admitted to {r} on the medical floor. On {d} a Foley catheter was placed; it was removed on {d2}. "
        "Echo on {d3} showed EF 40%. Creatinine peaked at 2.1 and improved with IV fluids 1/2 NS at 100 mL/h.",
        r=v.room(), d=v.date(admitted, ("M/D", "MM/DD", "MMMM D")), d2=v.date(discharged, ("M/D", "MMMM Do")),
        d3=v.date(admitted),
    )  # fmt: skip
    _prose(n, v.rng.randint(10, 16))
    _vitals_and_labs(n)
    _medications(n, v.rng.randint(4, 8))
    _social(n)
    _contacts(n)
    n.heading(v.choice(("Follow-up", "Disposition", "Follow Up Appointments")))
    b.line(
        v.choice((
            "Follow up with {d} in {dep} on {t} at 10:30 AM; call {p} to confirm.",
            "PCP {d} on {t}. Clinic phone {p}.",
            "See {d} ({dep}) the week of {t}, phone {p}.",
        )),
        d=v.titled_doctor(v.doctor()), dep=v.department(), t=v.date(v.day(forward=40)), p=v.phone(),
    )  # fmt: skip
    _signature(n)
    return n


def progress_note(v: Values) -> Note:
    n = _new_note(v)
    b = n.b
    _header(n, v.choice(("Progress Note", "Daily Progress Note", "Clinic Note")))
    b.line(v.choice(("Date of service: {d}", "Visit date: {d}", "DOS {d}")), d=v.date(v.today))
    n.heading("Subjective")
    b.line(
        v.choice((
            "{p} returns for follow-up of {x}. Reports feeling better since {d}. Her {rel} {r} accompanies her.",
            "{a} y/o seen today for {x}. Last visit {d}. Accompanied by {rel} {r}.",
            "Pt is a {a}-year-old followed for {x}; symptoms stable since {d}. {rel} {r} at bedside.",
        )),
        p=n.pt(v.choice(("full", "last"))), x=v.choice(PROBLEMS), d=v.date(v.day(back=120), v.rng.choice((
            ("MMMM D", "M/D", "MMMM"), ("MM/DD/YYYY", "MMMM D, YYYY"), ("MMMM YYYY", "MM/YYYY")))),
        a=v.age(n.age), rel=v.choice(("daughter", "son", "husband", "wife", "friend")),
        r=v.name(v.person(), "patient", v.choice(("full", "first"))),
    )  # fmt: skip
    _prose(n, v.rng.randint(10, 16))
    _vitals_and_labs(n)
    _medications(n, v.rng.randint(3, 6))
    _problems(n)
    n.heading(v.choice(("Assessment and Plan", "A/P", "Plan")))
    b.line(
        "1. {x}: continue current regimen. Recheck labs on {d}.\n"
        "2. Refer to {dep} at {h} ({u}); fax records to {f}.\n"
        "3. Return in {w} weeks or sooner; patient portal {url}.",
        x=v.choice(PROBLEMS), d=v.date(v.day(forward=30), ("M/D", "MMMM D", "MM/DD/YYYY", "dddd")),
        dep=v.department(), h=v.hospital(), u=v.address() if v.chance(0.4) else v.city(),
        f=v.phone("fax"), w=str(v.rng.randint(2, 12)), url=v.url(),
    )  # fmt: skip
    if v.chance(0.4):
        b.line("Discussed with {d} by telephone {p}.", d=v.titled_doctor(v.doctor()), p=v.phone())
    _social(n)
    _contacts(n)
    _signature(n, "Provider")
    return n


def radiology_report(v: Values) -> Note:
    n = _new_note(v)
    b = n.b
    exam = v.choice(("CT CHEST WITH CONTRAST", "MRI BRAIN WITHOUT CONTRAST", "CHEST X-RAY PA AND LATERAL",
                     "CT ABDOMEN AND PELVIS", "ULTRASOUND RIGHT UPPER QUADRANT"))  # fmt: skip
    _header(n, "Radiology Report")
    b.line("Exam: {e}", e=exam)
    b.line(v.choice(("Exam date: {d}", "Date of exam: {d}", "Performed {d} at 14:32")), d=v.date(v.today))
    b.line(v.choice(("Accession #: {a}", "Accession number {a}", "Order #: {a}")), a=v.identifier("id_number"))
    b.line("Ordering physician: {d}", d=v.titled_doctor(v.doctor()))
    if v.chance(0.4):
        b.line("Location: {h}, {r}", h=v.hospital(), r=v.room())
    n.heading("Clinical History")
    b.line("{a}-year-old {s} with {x}.", a=v.age(n.age), s=v.choice(("female", "male")), x=v.choice(PROBLEMS))
    n.heading("Comparison")
    b.line(
        v.choice(("Prior study dated {d}.", "Compared with {d} and {d2}.", "None available; outside films from {h}.")),
        d=v.date(v.day(back=700)), d2=v.month_year(v.day(back=1500)), h=v.hospital(),
    )  # fmt: skip
    n.heading("Findings")
    for sentence in v.rng.sample((
        "There is a 1.2 x 0.8 cm nodule in the right upper lobe, previously 0.9 x 0.7 cm.",
        "No pleural effusion or pneumothorax. Heart size is normal.",
        "Mild degenerative changes at L4-5 and L5-S1.",
        "Pacemaker leads terminate in the right atrium and ventricle; device serial {s}.",
        "The gallbladder is distended with a positive sonographic Murphy's sign.",
        "Small hiatal hernia. Findings consistent with Barrett's esophagus on prior EGD.",
        "Chronic small vessel ischemic changes, Fazekas grade 2.",
    ), v.rng.randint(3, 5)):  # fmt: skip
        b.line(sentence, s=v.identifier("device"))
    _prose(n, v.rng.randint(9, 14))
    n.heading("Impression")
    b.line(
        "1. Findings as above. Follow-up CT in 3-6 months (around {d}) is recommended per Fleischner criteria.\n"
        "2. Results called to {d2} at {p} on {t}.",
        d=v.month_year(v.day(forward=150)), d2=v.titled_doctor(v.doctor()), p=v.phone(), t=v.date(v.today),
    )  # fmt: skip
    if v.chance(0.5):
        _contacts(n)
    _signature(n, "Radiologist")
    if v.chance(0.3):
        b.line("Images transmitted to PACS node {ip}.", ip=v.ip())
    return n


def pathology_report(v: Values) -> Note:
    n = _new_note(v)
    b = n.b
    _header(n, "Surgical Pathology Report")
    b.line("Case: {c}   Received: {d}", c=v.identifier("id_number"), d=v.date(v.today))
    b.line("Submitting physician: {d}   Client: {h}", d=v.titled_doctor(v.doctor()), h=v.hospital())
    n.heading("Specimen")
    site = v.choice(("prostate, needle core biopsies", "colon, sigmoid, resection", "breast, left, core biopsy",
                     "skin, right forearm, shave", "lymph node, axillary, excision"))  # fmt: skip
    b.line(f"A. {site}")
    n.heading("Gross Description")
    b.line(
        "Received in formalin labeled with the patient's name ({p}) and medical record number ({m}) are "
        f"{v.rng.randint(2, 12)} tan cores measuring 0.5 to 1.7 cm. "
        f"Entirely submitted in cassettes A1-A{v.rng.randint(2, 6)}.",
        p=n.pt(v.choice(("full", "last_first"))), m=v.identifier("medical_record"),
    )  # fmt: skip
    n.heading("Microscopic Description")
    b.line(
        v.choice(
            (
                "Adenocarcinoma, Gleason score 3+4=7 (Grade Group 2), involving 3/12 cores, 40% of tissue.",
                "Tubular adenoma with low-grade dysplasia; margins negative. Zero of 14 lymph nodes involved (0/14).",
                "Invasive ductal carcinoma, Nottingham grade 2 of 3; ER 95%, PR 80%, HER2 1+.",
                "Hodgkin lymphoma, nodular sclerosis type; Reed-Sternberg cells are CD30+ and CD15+.",
            )
        )
    )
    n.heading(v.choice(("Clinical Information", "Clinical History")))
    _prose(n, v.rng.randint(10, 15))
    _problems(n)
    n.heading("Diagnosis")
    b.line("See microscopic description. Reviewed at intradepartmental conference on {d}.", d=v.date(v.day(forward=2)))
    b.line(
        v.choice((
            "Specimen {a}; identity confirmed by fingerprint ID {s}. Block retained in the archive of {dep}.",
            "Block retained in the archive of {dep} (specimen {a}); biometric ID {s} verified at collection.",
        )),
        a=v.identifier("id_number"), s=v.identifier("bio_id"), dep=v.department(),
    )  # fmt: skip
    _vitals_and_labs(n)
    _signature(n, "Pathologist")
    return n


def referral_letter(v: Values) -> Note:
    n = _new_note(v)
    b = n.b
    sender, receiver = v.doctor(), v.doctor()
    if v.chance(0.7):
        b.line("{h}", h=v.hospital())
        b.line("{a}", a=v.address())
        b.line("Tel {p} | Fax {f} | {e}", p=v.phone(), f=v.phone("fax"), e=v.email(sender))
    b.line()
    b.line(
        "{d}", d=v.date(v.today, ("MMMM D, YYYY", "MMMM Do, YYYY", "D MMMM YYYY", "MM/DD/YYYY", "dddd, MMMM D, YYYY"))
    )
    b.line()
    b.line("{d}", d=v.titled_doctor(receiver))
    b.line("{dep}", dep=v.department())
    b.line("{a}", a=v.address())
    b.line()
    b.line("RE: {p}   DOB: {d}   MRN: {m}", p=n.pt(v.choice(("full", "last_first"))), d=v.date(v.day(back=30000)),
           m=v.identifier("medical_record"))  # fmt: skip
    b.line()
    b.line("Dear Dr. {r},", r=v.name(receiver, "doctor", "last"))
    b.line()
    b.say(
        "Thank you for seeing {p}, a {a}-year-old {j} whom I have followed since {y} for {x}. "
        "{pro} was last seen in my office on {d}, when {pro2} reported new symptoms. ",
        p=n.pt(v.choice(("full", "middle"))), a=v.age(n.age), j=v.profession(), y=v.year(v.day(back=4000)),
        x=v.choice(PROBLEMS), pro="She" if n.sex == "F" else "He", d=v.date(v.day(back=20)),
        pro2="she" if n.sex == "F" else "he",
    )  # fmt: skip
    b.line(
        "I would appreciate your opinion regarding further management. {pro} lives in {c}, {s} and would prefer "
        "an appointment on a {w}.",
        pro="She" if n.sex == "F" else "He", c=v.city(),
        s=Phi(v.choice(list(STATE_NAMES.values())), "location", {"locationType": "state"}),
        w=v.date(v.today, ("dddd",)),
    )  # fmt: skip
    _prose(n, v.rng.randint(10, 16))
    _medications(n, v.rng.randint(2, 5))
    _problems(n)
    _social(n)
    b.line()
    b.line("Please send your report to my office (fax {f}) or by e-mail to {e}.", f=v.phone("fax"), e=v.email(sender))
    b.line()
    b.line(v.choice(("Sincerely,", "With kind regards,", "Yours sincerely,")))
    b.line("{d}", d=v.titled_doctor(sender))
    if v.chance(0.4):
        b.line("License #: {l}   NPI {n}", l=v.identifier("license"), n=Phi(v.fake["en_US"].numerify("1#########"),
               "id", {"idType": "license"}))  # fmt: skip
    return n


NOTE_TYPES: dict[str, tuple[str, Callable[[Values], Note]]] = {
    "discharge-summary": ("loinc:18842-5", discharge_summary),
    "progress-note": ("loinc:11506-3", progress_note),
    "radiology-report": ("loinc:18748-4", radiology_report),
    "pathology-report": ("loinc:11526-1", pathology_report),
    "referral-letter": ("loinc:57133-1", referral_letter),
}
