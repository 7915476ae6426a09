"""The stopwords of the grounding guard's content words (several European languages): words that say nothing
a memory could be checked by, and small words a Title Case line writes capitalised."""
from __future__ import annotations

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
