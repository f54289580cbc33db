"""PHI values for synthetic notes: Faker supplies the raw material, this module the clinical forms.

Each method returns a :class:`~nlpbench.synth.builder.Phi` (or a sequence of
text and ``Phi``) whose label and attributes are the i2b2/NLP Sandbox gold:
``date`` with its ``dateFormat``, ``person_name`` with ``personType``,
``location`` with ``locationType``, ``id`` with ``idType``, ``contact`` with
``contactType``, and the i2b2-only ``profession`` and ``age``. Values are
drawn in many written forms so that a scorer sees the variety of real notes.
"""

from __future__ import annotations

import random
import unicodedata
from datetime import date, timedelta

from faker import Faker

from nlpbench.annotators.dateformat import render
from nlpbench.annotators.locations import STATES
from nlpbench.synth.builder import Phi

#: A date: the type's own name is taken by :meth:`Values.date` inside the class.
Day = date

LOCALES = ("en_US", "en_US", "en_US", "en_US", "en_GB", "es_MX", "it_IT", "fr_FR", "de_DE", "en_IN")

#: Real US cities as (city, state); Faker's own city names are invented ("Lake Jessica").
CITIES = (
    ("Boston", "MA"), ("Worcester", "MA"), ("Springfield", "IL"), ("Chicago", "IL"), ("Peoria", "IL"),
    ("Seattle", "WA"), ("Spokane", "WA"), ("Portland", "OR"), ("Eugene", "OR"), ("Sacramento", "CA"),
    ("San Diego", "CA"), ("Fresno", "CA"), ("Oakland", "CA"), ("Phoenix", "AZ"), ("Tucson", "AZ"),
    ("Denver", "CO"), ("Boulder", "CO"), ("Austin", "TX"), ("El Paso", "TX"), ("Houston", "TX"),
    ("Lubbock", "TX"), ("Tulsa", "OK"), ("Omaha", "NE"), ("Des Moines", "IA"), ("Madison", "WI"),
    ("Milwaukee", "WI"), ("Duluth", "MN"), ("Rochester", "MN"), ("Ann Arbor", "MI"), ("Grand Rapids", "MI"),
    ("Toledo", "OH"), ("Dayton", "OH"), ("Louisville", "KY"), ("Nashville", "TN"), ("Knoxville", "TN"),
    ("Birmingham", "AL"), ("Savannah", "GA"), ("Atlanta", "GA"), ("Tampa", "FL"), ("Gainesville", "FL"),
    ("Charleston", "SC"), ("Raleigh", "NC"), ("Durham", "NC"), ("Richmond", "VA"), ("Baltimore", "MD"),
    ("Wilmington", "DE"), ("Newark", "NJ"), ("Albany", "NY"), ("Buffalo", "NY"), ("Syracuse", "NY"),
    ("Hartford", "CT"), ("Providence", "RI"), ("Burlington", "VT"), ("Concord", "NH"), ("Bangor", "ME"),
    ("Pittsburgh", "PA"), ("Scranton", "PA"), ("Salt Lake City", "UT"), ("Boise", "ID"), ("Reno", "NV"),
    ("Albuquerque", "NM"), ("Anchorage", "AK"), ("Honolulu", "HI"), ("Little Rock", "AR"), ("Jackson", "MS"),
    ("Baton Rouge", "LA"), ("Wichita", "KS"), ("Fargo", "ND"), ("Sioux Falls", "SD"), ("Billings", "MT"),
    ("Cheyenne", "WY"), ("Lexington", "KY"), ("Columbia", "MO"), ("St. Louis", "MO"), ("Fort Wayne", "IN"),
)  # fmt: skip
#: The states of those cities, abbreviation → name, in the order the cities list them.
STATE_NAMES = {
    abbr: name for abbr in dict.fromkeys(state for _, state in CITIES) for name, a in STATES.items() if a == abbr
}
COUNTRIES = (
    "Mexico", "Canada", "Guatemala", "El Salvador", "Honduras", "Haiti", "Dominican Republic", "Brazil", "Peru",
    "Colombia", "Ireland", "Italy", "Germany", "Poland", "Ukraine", "Russia", "Greece", "Portugal", "Nigeria",
    "Ghana", "Kenya", "Ethiopia", "Somalia", "Egypt", "India", "Pakistan", "Bangladesh", "Vietnam", "Cambodia",
    "Philippines", "China", "Korea", "Japan", "Thailand", "Iran", "Iraq", "Syria", "Lebanon", "Cape Verde",
)  # fmt: skip
SPECIALTIES = (
    "Cardiology", "Oncology", "Neurology", "Nephrology", "Gastroenterology", "Pulmonology", "Rheumatology",
    "Endocrinology", "Infectious Disease", "Hematology", "Urology", "Dermatology", "Orthopedics", "Psychiatry",
    "General Surgery", "Vascular Surgery", "Internal Medicine", "Geriatrics", "Palliative Care", "Radiology",
)  # fmt: skip
HOSPITAL_FORMS = (
    "{last} Memorial Hospital", "St. {first}'s Hospital", "{city} General Hospital", "{city} Medical Center",
    "{city} Community Hospital", "{last} Regional Medical Center", "University Hospital of {city}",
    "{last} Clinic", "Mercy Hospital of {city}", "{city} Veterans Affairs Medical Center", "{last} Infirmary",
    "{last}-{last2} Health Center", "{city} Children's Hospital", "Saint {first} Medical Center",
    "{last} Rehabilitation Hospital", "{city} Cancer Center", "{last} Family Health Center",
)  # fmt: skip
DEPARTMENT_FORMS = ("Department of {s}", "{s} Clinic", "{s} Department", "Division of {s}", "{s} Service")
DATE_FORMATS = (
    "MM/DD/YYYY", "MM/DD/YYYY", "M/D/YYYY", "M/D/YYYY", "M/D/YY", "MM/DD/YY", "YYYY-MM-DD", "DD.MM.YYYY",
    "MMMM D, YYYY", "MMMM Do, YYYY", "MMM D, YYYY", "MMM. D, YYYY", "D MMMM YYYY", "D MMM YYYY", "DD-MMM-YYYY",
    "D-MMM-YY", "dddd, MMMM D, YYYY", "Do [of] MMMM, YYYY", "MMM D YYYY", "MM-DD-YYYY",
)  # fmt: skip
SHORT_DATE_FORMATS = ("M/D", "MM/DD", "MMMM D", "MMM D", "MMMM Do", "Do [of] MMMM")
MONTH_FORMATS = ("MMMM YYYY", "MMM YYYY", "MMM-YYYY", "MM/YYYY", "MMMM [of] YYYY", "M/YYYY")


def ascii_fold(text: str) -> str:
    """Drop accents, as many record systems do (``Müller`` → ``Muller``)."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


class Values:
    """PHI values for one note, from a seeded Faker and a seeded ``random.Random``."""

    def __init__(self, fake: Faker, rng: random.Random):
        self.fake = fake
        self.rng = rng
        self.today = date(2015, 1, 1) + timedelta(days=rng.randrange(365 * 20))

    def choice(self, options):
        return self.rng.choice(options)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    # -- people --------------------------------------------------------------------------------

    def _locale(self):
        return self.fake[self.choice(LOCALES)]

    def person(self, sex: str | None = None) -> tuple[str, str, str]:
        """(first, middle initial, last) of one person."""
        faker = self._locale()
        if sex == "F":
            first = faker.first_name_female()
        elif sex == "M":
            first = faker.first_name_male()
        else:
            first = faker.first_name()
        last = faker.last_name()
        if self.chance(0.08):
            last = f"{last}-{faker.last_name()}"
        return ascii_fold(first), self.choice("ABCDEFGHJKLMNPRSTW"), ascii_fold(last)

    def name(self, person: tuple[str, str, str], person_type: str, form: str | None = None) -> Phi:
        first, middle, last = person
        form = form or self.choice(("full", "full", "full", "middle", "last_first", "initial", "caps_last_first"))
        text = {
            "full": f"{first} {last}",
            "middle": f"{first} {middle}. {last}",
            "last_first": f"{last}, {first}",
            "initial": f"{first[0]}. {last}",
            "caps_last_first": f"{last.upper()}, {first.upper()}",
            "last": last,
            "first": first,
        }[form]
        return Phi(text, "person_name", {"personType": person_type})

    def doctor(self) -> tuple[str, str, str]:
        return self.person()

    def titled_doctor(self, person: tuple[str, str, str]) -> list[str | Phi]:
        """A clinician as notes write one: ``Dr. Smith``, ``John Smith, MD``, ``Smith`` …"""
        style = self.choice(("dr_last", "dr_full", "md", "md", "np", "plain"))
        if style == "dr_last":
            return ["Dr. ", self.name(person, "doctor", "last")]
        if style == "dr_full":
            return [self.choice(("Dr. ", "Dr ", "DR. ")), self.name(person, "doctor", "full")]
        if style == "md":
            return [
                self.name(person, "doctor", self.choice(("full", "middle"))),
                self.choice((", MD", " MD", ", M.D.")),
            ]
        if style == "np":
            return [self.name(person, "doctor", "full"), self.choice((", NP", ", PA-C", ", RN", " RN"))]
        return [self.name(person, "doctor", "full")]

    def profession(self) -> Phi:
        return Phi(ascii_fold(self.fake["en_US"].job()).lower(), "profession")

    def age(self, years: int) -> Phi:
        return Phi(str(years), "age")

    # -- dates ---------------------------------------------------------------------------------

    def day(self, back: int = 0, forward: int = 0) -> date:
        return self.today + timedelta(days=self.rng.randint(-back, forward))

    def date(self, value: Day, formats=DATE_FORMATS) -> Phi:
        text, shown = render(value, self.choice(formats))
        if self.chance(0.05):
            text = text.upper()
        return Phi(text, "date", {"dateFormat": shown})

    def year(self, value: Day) -> Phi:
        return Phi(str(value.year), "date", {"dateFormat": "YYYY"})

    def month_year(self, value: Day) -> Phi:
        return self.date(value, MONTH_FORMATS)

    def season(self, value: Day) -> Phi:
        season = ("winter", "winter", "spring", "spring", "spring", "summer", "summer", "summer", "fall", "fall",
                  "fall", "winter")[value.month - 1]  # fmt: skip
        if self.chance(0.3):
            season = "autumn" if season == "fall" else season
        if self.chance(0.4):
            season = season.title()
        form = self.choice(("[{s}] YYYY", "[{s} of] YYYY"))
        text, shown = render(value, form.format(s=season))
        return Phi(text, "date", {"dateFormat": shown})

    # -- places --------------------------------------------------------------------------------

    def city_state(self) -> tuple[str, str]:
        if self.chance(0.6):
            return self.choice(CITIES)
        city = ascii_fold(self.fake["en_US"].city())
        return city, self.choice(list(STATE_NAMES))

    def hospital(self) -> Phi:
        first, _, last = self.person()
        _, _, last2 = self.person()
        city, _ = self.city_state()
        name = self.choice(HOSPITAL_FORMS).format(first=first, last=last, last2=last2, city=city)
        return Phi(name, "location", {"locationType": "hospital"})

    def department(self) -> Phi:
        text = self.choice(DEPARTMENT_FORMS).format(s=self.choice(SPECIALTIES))
        return Phi(text, "location", {"locationType": "department"})

    def room(self) -> list[str | Phi]:
        number = self.choice((f"{self.rng.randint(100, 999)}", f"{self.rng.randint(1, 12)}{self.choice('ABCDEF')}",
                              f"{self.rng.randint(2, 9)}-{self.rng.randint(10, 60)}"))  # fmt: skip
        return [
            self.choice(("Room ", "room ", "Rm ", "Rm. ", "bed ")),
            Phi(number, "location", {"locationType": "room"}),
        ]

    def organization(self) -> Phi:
        return Phi(ascii_fold(self.fake["en_US"].company()), "location", {"locationType": "organization"})

    def country(self) -> Phi:
        return Phi(self.choice(COUNTRIES), "location", {"locationType": "country"})

    def city(self) -> Phi:
        return Phi(self.city_state()[0], "location", {"locationType": "city"})

    def address(self) -> list[str | Phi]:
        """Street, city, state and ZIP, each annotated, in one of several layouts."""
        faker = self.fake["en_US"]
        street = ascii_fold(faker.street_address())
        if self.chance(0.25):
            street += self.choice((", ", " ")) + faker.secondary_address()
        city, abbr = self.city_state()
        state = abbr if self.chance(0.75) else STATE_NAMES[abbr]
        zip_code = faker.zipcode_plus4() if self.chance(0.2) else faker.zipcode()
        loc = lambda text, kind: Phi(text, "location", {"locationType": kind})  # noqa: E731
        layout = self.choice((", ", "\n", "  "))
        return [loc(street, "street"), layout, loc(city, "city"), ", ", loc(state, "state"), " ", loc(zip_code, "zip")]

    # -- identifiers and contacts --------------------------------------------------------------

    def identifier(self, id_type: str) -> Phi:
        faker = self.fake["en_US"]
        shapes = {
            "medical_record": ("########", "#######", "###-##-##", "MR#######", "##########", "E#######"),
            "ssn": None,
            "account": ("#########", "A########", "##########", "FIN-########"),
            "health_plan": ("???#########", "#########??", "W#########", "??-########"),
            "license": ("??#######", "#######", "MD######", "#########"),
            "device": ("SN-???-######", "??#######?", "#######-??", "PJN######"),
            "vehicle": None,
            "bio_id": ("BIO-#####-?", "FP########"),
            "id_number": ("S##-#####", "??##-######", "#######", "RQ-########"),
        }[id_type]
        if id_type == "ssn":
            text = faker.ssn()
        elif id_type == "vehicle":
            text = faker.vin() if self.chance(0.5) else faker.license_plate()
        else:
            text = faker.bothify(self.choice(shapes), letters="ABCDEFGHJKLMNPRSTUVWXYZ")
        return Phi(text, "id", {"idType": id_type})

    def phone(self, kind: str = "phone") -> Phi:
        faker = self.fake["en_US"]
        area, exchange, line = faker.numerify("2##"), faker.numerify("###"), faker.numerify("####")
        text = self.choice((
            f"({area}) {exchange}-{line}", f"{area}-{exchange}-{line}", f"{area}.{exchange}.{line}",
            f"{area} {exchange} {line}", f"1-{area}-{exchange}-{line}", f"+1 {area} {exchange} {line}",
            f"({area}){exchange}-{line}", f"{area}-{exchange}-{line} x{faker.numerify('###')}",
        ))  # fmt: skip
        return Phi(text, "contact", {"contactType": kind})

    def email(self, person: tuple[str, str, str] | None = None) -> Phi:
        faker = self.fake["en_US"]
        if person and self.chance(0.6):
            first, _, last = person
            user = self.choice((f"{first}.{last}", f"{first[0]}{last}", f"{last}{self.rng.randint(1, 99)}"))
            text = f"{user.lower().replace(' ', '')}@{faker.free_email_domain()}"
        else:
            text = faker.email()
        return Phi(text, "contact", {"contactType": "email"})

    def url(self) -> Phi:
        faker = self.fake["en_US"]
        text = faker.url().rstrip("/") + self.choice(("", "/portal", "/patients/login", f"/u/{faker.user_name()}"))
        return Phi(text, "contact", {"contactType": "url"})

    def ip(self) -> Phi:
        return Phi(self.fake["en_US"].ipv4(), "contact", {"contactType": "ip_address"})
