"""The stopwords of the grounding guard's content words (several European languages): words that say nothing
a memory could be checked by, and small words a Title Case line writes capitalised; and the common English
words a sentence opens with, which name no one; and the words (pasts, is, has) by which a capitalised word opening
a sentence is told for its subject, a name, rather than a verb ("James from work climbed")."""
from __future__ import annotations

import re

STOP = frozenset("""the a an and or but not nor for with without from into onto about above after again against
because been being before below between both did does doing down during few further once other our out over under
until while where these those this that there here what when which who whom why how all any each more most some
such only own same too very can will just should would could also has have had was were are is be on in of to as
at by it its it's i me my mine we us you your he him his she her hers they them their if do so no yes than then
am being has having let lets get got gets something anything everything nothing someone anyone everyone
le la les un une des du de et ou mais pas pour avec sans dans sur ce cette ces est sont était il elle ils
elles je tu nous vous on qui que quoi au aux en se sa ses leur leurs ne plus très
der das dem des ein eine einen einem einer und oder aber nicht für mit ohne von zu im in am an auf aus
bei ist sind waren ich du er sie es wir ihr sich auch noch nur so wie als dass haben
el los las unos unas y o pero no por para en sobre es fue yo tú él ella nosotros ellos lo le se
su sus del al que muy más
il lo gli uno una e ma non per senza di da su è sono io noi voi loro che del della
os as um uma mas não com sem em sobre é são eu ele ela nós eles do da dos das que
het een en maar niet voor zonder van op bij is zijn was ik jij hij zij wij jullie ze dat""".split())

# A verb's past with no -ed to read it by: a clause's verb; it names no one (Drew, Won, Sang, Hung, Fell do: not here).
PAST = frozenset("""went came took made met saw ran ate drank got gave found felt thought knew bought sold paid kept
left told said wrote spent taught slept flew drove rode began forgot swam wore grew threw held heard sat stood built
sent caught brought lost chose spoke broke woke""".split())
# Common English words a drafted memory opens a sentence with ("Plans to visit...", "Likes green tea",
# "Recently moved...", "Although busy, ..."): capitalised there, they name no one. Base forms; an ending (plans,
# visited, enjoying) is taken off before the look-up. Words that are also names (mark, bill, hope, grace, cook) are
# not here.
COMMON = frozenset("""like love enjoy prefer want need plan hate dislike visit go gone come attend start begin stop
finish keep try work live move buy sell pay use make take give find feel think know see meet call read write run
walk eat drink sleep play watch study learn teach travel fly drive ride stay spend leave return book schedule
organise organize join host celebrate remember forget mention say tell ask wish expect decide agree intend usually
often always never sometimes rarely recently currently today tonight tomorrow yesterday later soon still already
once twice every many several another new old next last first doesn didn isn wasn hasn hadn haven aren weren wouldn
couldn shouldn user person speaker people family friend partner kid child children favorite favourite daily weekly
monthly regular morning evening weekend afternoon night although though since despite whether neither either
meanwhile together early instead however maybe perhaps overall whenever unless now nowadays otherwise anyway
afterwards besides somehow elsewhere everywhere yet almost earlier thus hence rather quite around ago outside inside
upstairs downstairs abroad""".split()) | PAST       # and the pasts
NAMES_TOO = frozenset("will ella al les del".split())     # stopwords that, capitalised, are names (Will, Ella)
# What follows a sentence's subject: a name before it is no verb ("Thomas is", "Fred and Anna", "Lars went").
SUBJECT_NEXT = frozenset("is was were are has had have will would can could should does did do and or".split())
_ENDINGS = ("ing", "ies", "ied", "ed", "es", "s", "d")


def is_common(word: str) -> bool:
    """`word` (any case, any ending) is one of COMMON: "Plans", "Enjoyed", "Moving", "Studies" are."""
    w = word.casefold()
    return w in COMMON or any(w[:-len(e)] + tail in COMMON for e in _ENDINGS if w.endswith(e)
                              for tail in ("", "e", "y"))


def verb_after(text: str) -> bool:
    """A verb in the clause `text` opens (to its first comma, or and, that, which...): after a content word, a
    past (-ed, went), is, has, will, or an -s word after a name ("from work climbed", "with Anna climbs"; not
    "her snacks"). Not a participle after a noun (a gym named Boulderhalle, organised by, named after) nor the
    verb of a relative clause (the gym Anna climbed at)."""
    clause = re.split(r"[,;:.!?()\n]|(?<!\w)(?:and|but|or|that|which|who|where|when|because|since|while|if)(?!\w)",
                      text)[0]
    words = re.findall(r"[^\W\d_]+", clause) + [""]
    for i in range(1, len(words) - 1):
        p, w, nxt = words[i - 1], words[i], words[i + 1]
        if not w.islower() or p.casefold() in STOP or (p[0].isupper() and i > 1 and words[i - 2].islower()
                                                       and words[i - 2] not in STOP):
            continue
        if w.endswith("ed") and p.islower() and (nxt[:1].isupper() or nxt in ("by", "after")):
            continue
        if w in SUBJECT_NEXT or w in PAST or (len(w) >= 4 and w.endswith("ed")) or (p[0].isupper() and w.endswith("s")):
            return True
    return False
