"""A podracing bot exported from an Arena training checkpoint: one file, standard library only.

It computes the policy's inputs from the observation exactly as training does
(services/trainer/features.py, mirrored line for line below), runs the DeepSets network (12-bit
weights with one scale per output row, dequantised once on the first turn) and plays the most
likely of its discrete actions (ACTIONS: a rotation and a thrust, SHIELD or BOOST). Each pod aims
AIM_DISTANCE units away along its heading plus the action's rotation.

State: each player's runner pod (role hysteresis), kept per player id and reset on turn 0.
The CodinGame version also tracks what CodinGame does not show: checkpoint passes of every pod
(from next-checkpoint changes), each player's turns left before its timeout (from the passes), and
its own pods' boost and shield cooldown (from its orders).
"""

from __future__ import annotations

import math
import operator
from typing import Any

# >>> parameters: written by services/trainer/export.py
SOURCE = 'latest.pt: iteration 2572, 105,734,144 steps, stage league'
SHAPE = (32, 16, 64)
ACTIONS = (
    (-18.0, 0.0, 0), (-18.0, 0.5, 0), (-18.0, 1.0, 0), (-9.0, 0.0, 0), (-9.0, 0.5, 0), (-9.0, 1.0, 0),
    (0.0, 0.0, 0), (0.0, 0.5, 0), (0.0, 1.0, 0), (9.0, 0.0, 0), (9.0, 0.5, 0), (9.0, 1.0, 0),
    (18.0, 0.0, 0), (18.0, 0.5, 0), (18.0, 1.0, 0), (0.0, 0.0, 1), (0.0, 1.0, 2),
)
WEIGHTS = (
    "嫠呈凞娠巛俟丣乛丮嬾副亵嗿仒巿嘁倮中它九假万巋嶋墷丌娮亾債峕屵姇塕刞咎巹七世巷吮姓嗿丵偺嘁嶩傠崘寿嶸丠伷冗巹寨佔嶪嘁屒巛巋巈崯巖巫巫巳巺坕乩侌嵇卍巆巴亿巟专与丄巼巾嘁孂尻処凬久嵺九伊丆左亿嶔乎嗿崹實乶"
    "嘁世嶉崬嶗乑万侊巒丙屄孃倩嘁几峧嬭住偟亄巈佤垔巃僕件嗿嶒住傭专孭丂差嵴厑嵈巼壛岽嗿巑岽党巪娨丑三巹叹主巤倈嫣崯丬嘁且嶅嶳丗巬巼习嶏巫峗伪嗿岨堟仪亷亀嶕东丁乔丵丏太儓媲嗿崗寽俥刈嵽峉嶩寀勁唹乖八偌嗿为伃"
    "儓嵝孷巰丸便叕丝天乧乗亡嘁乤巿仕崿乀丈堣兾丆儌们巅嗿之嶺僣业嬺工万嶿吴丈夬亝僴亐宇儳嶀媴巽巫丬倱侂乔嗿儃事寐佲伡娪尌卲亸崡傗寧嘁信务凸嗿噛乀乕乐乽工业川並巫娨侨凩嶒傢仺嶮崥书丠丫僻嵾七嘁伣嗿孭乤伺伕刟"
    "宔嵶似嶀一巂嘓嶑仡乔嘁三丵崶巋三丛左巸七尸佉孷倣嘁巐主崛巿巭丘巪东丂嬳値孬侲嘁嶅乙佰嵓丕已屄嶹专仌嶐丯巰寣但仺乿嫁嵶巳嵧崋娵巋嘁嘦嗿仃巈侮巃丹巐上巬丫下厰丮偭呅偄乹偳乥屠乞巏侌兾丕嗿亥屨嘈嘁专嵩嵖嶻丄"
    "巣巵丘已嬇們嶠嘁巊嶩嫣巩偿不並巭堀巟岴崇巭佽吉乑左亖嶺巴一巚丙丘嘁峬居堓嘁丫嶵嵆嶬丄巚工临三害健巭己丗嵱专嵟嵏丒乸嵂丟峡亩亁七巅嶺崣嶺俣乞嵍嘁峒乛嶶乞仰佪巪乩崏伃尰件巎塥嘁娑亠巚巬伙侃呄乬嶤乁嵆丰嵽亣"
    "峴们作嫨屍嶞伒仼媵們呯傻岬乆巏丄夛嘁嵿嵳丘亁嶛巕佻巷巌乌仟个嶙丿丌嵤偲媦乇且孍嶨倖巣勍僝屴們亭于己岮嶳屇伙亀崰埓份巺崞嵟嬕巷嵼亘伯丠嘁云伊专巯巭亅嬺川岠嶖与巨仾巅仝屖亅峠峴仟亽嵝乞亍俨嵶伌嶺伔亨嵎佈嘁"
    "尨倫体崓嬾仪伏剜巁嵕巭串巛习嶾丂工乴峸巨婄乐丨巋三乄嵶孌嶑嶤佣嗿丕丯东丟媰习巚俅什孖乑交峍塰宼孆崵婣寣仟冰嵖嵎宎俪佅八倉匩偳嗿兪岺室佼嵨媗侠侶坎万偈亼兠乣奎嶓媉専亪岠刀僃俚嘁屘南嶢夵傧傴嵶偨巛丸介岮岚"
    "仧宿們墋岜刹侀巪嶆崍己嘁嶺岏乭宼像峊倿尾乽亥仉况偠世剿兣交峆仇姰已媅嶟俕巺嵝嘁人串屡一伺亠岏业俀俥嬹串侉嵶佬侻嵿仐佝下嬁亻侸佡仉崳巠丂奜嶥东嶺义宋岛世崜巤並丹巫伜乱丟巉丄嵢嶼劼巛嶀傸匢丠丞嶾嶮嘁嵡巋姝"
    "乲卢佾喓乱塯宫寰岈仕屢侽之乱嘁岒俦宁保健代嶖婬五妟嶌峭住佽媓冠剬岮噏巔層巟嵋嬎堬俄巾岥仟凼嗿佅垞密岏孠儂伐嵻伳啁岷她嶾伴剓呀亹寍仪巭佻峂嘁夫安屋乬峕乚寐崆丮刀屼媤嶏巰佔乧伒乌嫄乚嵥乑崀丝丳乽倯孅婩侸屯"
    "丬媄孄堍严匃嘁媢儱乕凮孵峋伋巴剀冂崛劜孻咁妸丄实保傛冟丘娩岻巢佂巇塷丿属崨屖丛垊嗿婴侅倱层寭尜仮嵄吥冚冽侜亲亁刨伀巿別嫥媗偾嘁害佶匁嬣嶇嵾倳嶯僀娝丢嶫嶤巿巵峙丱仫崻嶑侂嶋亅两上丏崷巣丘乴差巭尬似丘丬嶾"
    "丏伺个巭们嵀嶉嗿丶僷峷夔仳巼嫸属崪倁凹伍丏崈伶么巺岶嵿丷亜巬乓嫪巧乌境亀嶱巺亲姠享巪习巀凙娝为下嗿丅侊其匵巩丁婴嘁州伊嶏亻吙峃嶶峬亻仏乨二仰嶍付尵峑从崧巃尟倜伩嶽下丸丙巛巔峐巋丹嵬丑岽嶖不偂别嗿崕嶖富"
    "倓亏巉嶗囸仡岭叓乑佹峪嗿乡乂尾丛寂嶵巩交巭伝嵝三下丠专巹巋丈両巬且举丄已巰万州嶿壻嗿和巶乐嶈容乲世寲偌佀嵕嵓封侕偩亷侶孂尋係偄姦婔伱二寍佩俆唊嘁实丩丕寄傟巍夏巾丒嶋乹巷与巽丌巷巶巴中巠巛丶上巷左巽巪下"
    "容亅崨嵋嶷巉亂亯峹伈崖兄孫乮宀五傸巸寇嘱嶭世劲侕倮勁仉嫄嘁崠墍各冠巬丟偋嘁俓俫宙乴娿寞亼匂侞亦尠嵚夁乌坧仭岇乔屈偯宐孚儎巧川乩专巶岓嶴串乡嶢巼岞巤巟嗿巐崯巎乚冴巹嵙峩嶴實侀乖乛噽伜嗿刓崋媖垛嵰屝丌奢伛"
    "嶿单史巡么崊伮享峣嶧崏嬨岋冥峴今尞巄嬲崮僶嘆佟嶎亓凤呺七九仗嶉嗿嬕巕嶈嵿丸巫嶷峘乣丗丏仇巇仴丣差久嵹妒嗿喘嶀乛俓孩孿仳丏巌塝崞丹嶳崣佚嵞下儶乎侞乙嵭孚兝佖嵠室丛嶓会嘁創垺剪崶嶃嵪争巶岀娳串巳嶞巐巪嶜嶔"
    "亘嶗嶾仱乄巓乮巈巇崙將宑嘁巁巘墘似买嶘巪乿宽嵫巨乚亖乇己嶵嵬巇乲俣丽义巍一峪嶙丅嵟州了万丶佼嫓寺从丏么匾亱巩尙仯崝嘁巪巚劃処壾嶈凱峥仵嵍凂乼乚嗿乔巻一巊嬹巿巽巿巽巟巾七一丄丁巿巼丅万丅七丁丂巼巿巾丄万"
    "嗿嶘嶭亄亚岳峰乒嫩亩仚姴崁丶嵅丨丑么丢巃巄亏们伬峬嵆巒嵒崕峡咛坜嘁巘嶅介丽乾宰亳乇奱屩嶡僔巼嶅崢岯亢乚崶丈儨刅岼崓尦嵂乘喉偦嘁巉巳乚嶗丞嶿乵巣儘崏举伮乾巏丯乓巺嶶峭乿伃丈崂乾嵮尐崙嶜崪代嶕巫丑娆崪仠坄"
    "巴句嵄娳傺儲尸崜姆佦傏宄岰崖嗿嫃儥伧刔喒乃乃嵼乒丼嬙峀嶘乗巡丛塽巁巳卐屭嬻僎岹偲儢嫡佅伜嗿壺仿峯屟巫催仉嘁亰崭侔丨且嶵乢已但寨万丵巯巫上工己丼嶧巸乵个下丠丂巶嶲嘁嵝唌乴乑岏嶓州尯亏串丯僸乎崰佛巩嶰嵫屲"
    "崟崻倖便偊宲价岰嶁乒僨嗿峕巓丂嶒嫵巰丘丆世崷且巺业三巭巶巳巷巵左左丣举巖丒巄巴左供劐嗿嵊屄寡呻巈元佃岴喌娦串伶伱嶸嶿仫宓介崛伊峸峻崓傞乔屠峃丐丈乭丨丂嶇仄巖乑嶹巾崥嶅不刧乶峦嗿亟嶎孊妔寑嶹尅乶嵀从嬗亱"
    "巌丣巧三巚嶖仮丩丕左巗居巏丩巳嶻嵋嗿丱巕嶪伌巶巵为哸媚亇壠乾丼丢乫世丞俌乏嵛中七巚一嶀丠屰亗嗿峃企嶒屲伸峠巰匐冴巍仕屨峸嶏嗿屯一巽亱嬧丒丑丢已嶿巭丄丑丈三巹巤万丁巫业丸巭差巾已巒巟乛巸乓巺七侾丕乇乂乞"
    "乒媑丄巁奣嘁右嶑亢刂娐尩大丟嚘劀倠俪偔寫嘁仩岵亏巿冼嵚丨巚乑巁凝嶓万丱丣巉巴嶮巜义嶖丂乨巪丄乔东嶘嵀尡体佃嶌嶮倐峧岀嵜嵵佉嗿嶥巹嶋丯崷屈侫从嶷巠仸峧丁婨倿仓値巠嗿喩埸嶷乲尒崽巤崱乖嶿兪也乧嬮巪巎嶿嵆屦"
    "仉嶸仫伞些崼丣丫侴嵩妋嘁单州嵽伩冮侩便峠巺峜巂巊巍俐什墙伫変嵃傖儊宙倣嶻岩導乳倞巑巴丽巬巵亢巚巺丨巏巆岞三为嶕举兄左乑川屴乼乃巷嘁仗已佝巇嶝局剂仞亮嗿亲峖巰丁丬巴岆嬙丈丑巡巽且嶲巤巗嶱並丼巕丈上已巍巚"
    "寐嘁嚆巐巠僂侭巪婅乎巘嶤巐巪巷嶶丂工嶅与巣嶙丝伲嶓巂嵹巗巉一嗿對倨巧巰孖仨丛丑乊嶹小业丯嶱並丌巸巖三巯义业乢中嶹不嶸巿嶐劻冊傍伝伱嶿寫嶻伔巩嶢嗿崼乇伷亹屴嵁嶀姕倈屳凖併伭嶿佽伀丯巷巋嗿嶍一巽丵嬲丂岠一"
    "丂巗下丅丁丂丂丁巸巽巾七巿丄巿丄巻巿丁一宧寞劧丑丬嗿崦丂俪妽佄傳丄妉峎亅冣丽孯匄処宦屶岌寽嬰奺仺亝崆嘁导嬊巖巻劳京巼差两巡嵦嵥上巕巹丒差巩丆丝丒七乃巺巺丂三並巈勍嘁媨两已岘儼巇妯乫巠伔佩不巤乖巾巽丏丣"
    "丠已丄乕东川串巠丐崪丅巾丐专丕亀巺丐上巒巿僌巸丅巴则嗿丏巟孴偠乛嵑巭崈亹峘卛嵭乒崝傘倽久佗崆凷俳佱嵨乺嗿嶺嵜丵丏嵠峇亪亍巣傍峪嵀偿嶳岤嵠乴乨境嘁墽嶩巸俑伮崤乿住嶝崙両丠亞嶴巩巻崫丟仫伒亜亼峀崡仵嶅屙尶"
    "宏劁奱丰三冥峾峇岢冹岥临佹仧伱崫亱崿塌亶傳婙岷嗿件巴岰屑嵘嬟儶嗿峥巽丅嵑嬯巾崄么巻巒丙巼与巾巵与巰丌世巫丆业己东丂巵巻巧巘业京巚巃侻冦巵乲巃巹佱巑嶮嬑倴嗿巁他堤复巸峩嶤堃叅巧孭傣寏南俋嗿丧丙寏嶃世巷巾"
    "东嫀巏巺丗巆巺丆与丐丷巸丠巐巡丂丽丒巢巻巻嘁媪丹丐佥儡巛已丅巢仒嵭巾巪丏巹下巫专巴巛丷丯巑下丧丢巢嶿乾乡巿巸丯倈屑崁巜东崼一峄巋丆僸俀嘁仉宩峲両屫乾仄佰侼宛丑尦妇嘁刨丗巻亨僑丟巸中丒婾崨丛丮巫差巟嶥乢"
    "乻乀丿乒巍丈巜巾左巀儡孋孬两嶒嶏崝乔全吝士僄亊伆伡岂仵嵵嘁丏冴壛山冀优俆密巈己孍嶿佼価亷巸冢俋尰伎亡亊勨俘乕嘁伾凞俖乨侭媥冣儹嵝俗咫岼孒乀审嘁孶吓丮嶠侚僾嵔嵭亩乀巤亚中寰也嶩巭嵲屹久嶎巾仟両巻嶲嵺俕嶛"
    "仴上嘁奼已偤丁巾嶼乵巈岮婾专差七巶与嶻巇两巀巷乲巾且丘巵左嶆媡嘁哐嵗嶘嶨劐嶷乩屡仇俫崱嵭岽亸丘东亳尜人峞屾尊儰嶈们屩令事個嗿不巽巿嵪孔丏屨七丆京且巺不巺巶丆巻丁巳一上三己丌巿巽巽丂嫫嗿峻巄巹傞寥丐巍乀"
    "巳岨上业之工州左巵巟上嶷乞乓巸工丹巵嶯嶴儺否俖丶仈婊宄俺崢仡巢嗿坌嶁劆丹乛垀俌夔伷儖凬丑倄嚶凱媮崿丄嗿岭儝乀丛夼亊嵾亻丌巤哖倴丒不丙巭巯巢嶜巾嶇亅亄巰巨丅丨嶲巼亓屬姬嵷口丫偉崤嶛尵創伞丧俁事巗嵰介巙岘"
    "嵩妩峑乓嵰亷乕崜嗿埬峃僺嵩嶆三亱卭巸崂佾嶡丳嵍俀侍噯巊似岯亂偳巽巎伺傑佫倆尅巪孟乮崣嵁崂丮儇嶇巆佼嬠巁匓嵱嶒嶳倇们岋嶕仡丢埿冐倌亚傳伾伒嵊岖巨崰偸嶟嘁倳人孱屗俤岜丌俍亭亓伻尴丩唍们嶫傽们婸匶峭剔巘佮众"
    "佷偙伞崺偰妪乂嵬丳俵侃侑为嶚乤嶳伭丵嘁巬今尮事俑丏巻嵃丁嵂俛亙巟崽嵕俆孚寃乮乵嶱嵂伔岧嶭嵨不屜嶜乯乛临侤伃专为嶻峤丱寑上巺乂峕岴嵭亼临休巋州嶾仓严倕倄岮媽傷仈便巜对偍乧仕嶱伫侎倄峓乴佢伯倉七凬俱奐崸亦"
    "崵嵫宯埾伫崄乾伈嶮亇刄屶仼妽峊丱付佔害乶儹嘁俥嶔亣峒侠儐亨崺他嵵妋寿体件嶱习伧嵏崌巛巜嵩也嶏仾仃屸嵶巸俱嵜巼亦丁乽亹巾仛嵸亹巓乵嶸亯仛亐巪巂伐岵佲嶓娒岋丢丬崷婡屍乏乗丽传乃亨岇嘁仛妛佞亊与亯乨乽嶲丛仑"
    "仂嵳丨丑串乘妰岯与嵌主二丸岞丂並于宨互巵乑丵嶋仳巕佼巉巉乪丧佖乢娗嶉业峸会巯崟乥世嬯偑嘁屉峴巸巄巸企串峮屣巕巑亯乎嶅巷嵄佖亾仏乙仡专丩乂巷丈乔峩丨嶄嶜嶣东嶧巋嵯巏嵬丹于伧乄巉佌崿丞巴巂买巼乊巃佹丅巸嶋"
    "专丷乶巜丙巘巰崹崶丈巨嶥仅並丢嵼主主丶乶丽巘嘁乀嶓丕也巈匈嶭些乧侞已侼凎巕丢巈峭丳乣乛嶜巚侾乗人察尖个嘁侔嶲丅巇仄嶡尤屪七嵓岹嵪嶦书嵾举二嶞巻峠倇崄価巷嵙伮巧巂巴仇亱巛于佈匋丶丿已崾丧嶪义交峙巵巅嶔佲"
    "丂嶖丅巾崯嵬丏伱乇侜巹井佝並巰巅屍巈崞嶿巬东屘巘嵥巈亥嶇己巵东嶺丳仿巀峺乿巢七亖巢亸久嘁仅巩峧亻丧峲丕丈乎嬜已丵丛巫丠巀亙崚崤侺也崒亦仺嶴岪乵乼巩嬣付侢优崪乬嵼峯作乩乌丏嶃嘁亭宿巸侠崎从巳个亠亲妯峜垢"
    "巆乳巻丏巭乒丟巿崃亽巸仆仹崙丟寳产寑乖产劺伦峺崨乥屡宫匞丙巔凁偾嶦嶅倉嘁倻刏傢塖寷姩傂唋俱仳嵐塏勱喜埜几仡倓嫠孠僴串伻什嶘埋偤乩嶫動寇傒嗁唲姝孆嗭亦亂九呿伊久岛匫倡岠孛巖丅巸巳丁巵左乂万巎丐丈両巣业丑"
    "丁嘁万主巽丯巯巚丐嶰丁巩与丄岻一巻巾巳丝乩丁乡丈巴岲巹己丫巠巯丳丶嶕己巤丿巵丅丠丆东不丁巒巫巼上剟崻嶂仾伯乪丩姄嫾亸婓也崾俌峧伥宪刀丛墛媢壻佤嘁岯亓仃余倊孟剖婛偖崈州嶌久丈侀万崒凝侠兕価嶛偬岰嫃厠侣偫"
    "仴儇嶜壙佡丏崰崓叻巎崎嵟丬丧丛丠峲嘁巗婂乩嶥乏巏丏嵺婯乹七寥伈乁仾亝巷侔岲亥嶝么嶷丯伌乄巰巿亼嵀乎丂巘巬丳乪嶖两婿五嶫巍仕寳乛壠川丶嵶仲丹嵕嶁丶屧亂也嫣伿乮东乂乏丘丆嘁丮丠左不嶰临嶯乓乑仉崤嶂丯丯嶡崉"
    "亏与巟巩丷嵼书尼侌巿七嶅巧丯亥屠嶧亇巘伲屪崬乞丱井嶲产买峋丈嶕嵺乃伆事嶺丬令丧嶆偅嶕嶍丬享仰嶬宸嬸峿封嵎丈乶丧巡宩假嵗崤岩嵹倀崡崧峭仕匄嘁丠仭崙嵖仢屩峜嶡串佥乒崮佻伛乆刴儘乓嶹媯嶅寮义乛佶倝嶣仰両乬崺"
    "巾岴崼嶿乥儼仡巸剃巖伈嶧嶆嶯亟丟亽嶅巽嶥宁巃个乔川崲停岤己巃丩俍亍屖乖亁嶽嵗乌崾侯巿互予嶂丕五乁巔嗿峷嵲亀伛凉嵿嶹僓巾丑亖丳丄乜嶗丕岑嶗岸嶾丄岧峽屉屽峵仿崣亇亞崔宲伊差亪尉俇二仯俵巋佺崶伂嵹嶌乒丅乄嶺"
    "嬃嵽侯尽伞嶻嘁巠川亵冹嚕宏尃峕嶣伷侂丌寍妐乹屴仩乜峆下丱俋嵞伷为尙冀买俑峔京佞仯峵寲僢俋佖侄岁尦仙宾嶇嬕倪仺峯压崈冸丅亍丐嗿倚偊嶍乘久峷嵣川佃傆临佻偐処住唀丈層寁嬭嶂峍嬷修伜崉兴尦争宮尀俗嵎孕亦丳己之"
    "宗三州嵒巐丿世丌巹嵙巜丕丏乼巘岞峩丽嵽云嶛崷亮仝嘁兤巐伛中丆嶇巤姫巴巨巀亽巌巯嶿亚俯丑丸峝仢崧嵹嶖崜七嶷屺乂丙万巾嶾巺亘丐丯丨乿嵑岌嶫墌乳巼不之仞崔嶘仍乴寝丧仁仦亠三佈崗俁乯丂嶣丹乑嶑岖乮亳嵟乭嘁乐丨"
    "嶎工嵹书奩丢嵟且仠寠下墇嵶両嶦仢七嶭嶱峉巁从丁媳儏亟嶻巋屄嶒巸傸乙亘亍亱亦乹巩屬巂寿借债优佒巈巚丑嵓乎与嵉巔嘁丈崡嵸巔嶽嶟巾伤佻丰圸嶌嶔嶍佳丄丩佂乽伬串予巤仟俿巩巂嶘巣巆嶔伫亲佩劦亽巠呅且傖巔伔寑嫽乊"
    "仮七丐仧妜嶨乤寒崽丱仙巏尝乴乩叻俾侀亍仒亃婿崄宍嶶东崊乜崯亵争乓伧嗿崏巕仳嶮刚嶣嶁剨亼巐嶒佐乡亴嶖崄守串僩佈岜岁奧剉倽優媝儦埶崵岄刀侰剱佝尔伭崎孳傴寧妰嫒峾仟刏倶偢岙冃凛卤宬尹傑乖伡傷佤嬎儎崍亷嗿娔傖"
    "儼偦娹屳倸仧丟嫗宪孩匕嶅傇俨岗冚嶻嶨巗巌崬嶎巀巀巚嶨乗已巾嶪临丬丗仪丏乖巹亝嶰业巋世亅乯嘁伺嶌崅嶺亘为亞媔丏嶣亱举丰差亄亽丶丏乘嶯崍岪嵞嶻嵢丌峢嵮州一丮巿丒为巷巟偬倳但仁嵩亶会严俎嘁丁伴來岾巢乬儐巖屼"
    "丝举仚孹嵹孽勿岵嗣娋亩勧佥嶀嵽予丧乬壋侁勽伆屾勓屘峔寍嫲壕尚億伐屐巶屶俥位儿峈将嬀一倉凝巕与不巘巙己丏争丐巑丫丮久巁丝丅丯嬧与乷乵丮巵丢丁宙巏万巐丞尯丳崇严丯丁万丂乕丰临崋巀嶊巘一巭丰乹塧巵嶗巖差下乆"
    "丌巹三嶺嘁丱巨丙业僃崭屡仕嶬众佝兇侹呵仂屧借嵝岻峃巈丽媑宦件亡崆丗屃岿俊尓嫅亿嗿叧价乸崪堑嶥乷侕岏俐傅了乎倚係崲佹刃尩俻嬶峑巌婶亁审丝島厗嵱仰俱丮巟丅嶗崻丏乔仇久巃主丸丢巘巿巐乖嘁个乙丟乖巤已巹东丒巣"
    "乆巭尗丢將且丨丄巭丧巸丒丽寲嵯岶巚巖嶜巽乇嵙乩嵽巃巰义乸丁巏丗嵬嶯巓巸丣嘫侲乥傼僥儁了啊仁岮仔峃嶹峐佼侫伙尬乾伐且侙川嗿崜仁亖嶏婽到倕媼寰尹于亁宽巃偂傦屼巸亄伭仫卼亀众伴居仩寄丄巼嶍屩宨俟壀优仓岧嶱崼"
    "尉嶠巓巅伝岙峭伖巿嶽乯巄乓嵭久巍巐嘁们任亟巒嵵偁峖俁巙崰倰察剤乁俚丞巐丢倇嶐亱仂仹偬屍孃亯嫬嶠乏代実佳它丧世屉佼亞嶆业上亄佥乃丷丫巺世巴乮巷巻事下巴巵丞丣巜丆已巓嵐丮亖丆乁丗嶶巬巸世丁巶己尨巫巭己巿巫"
    "不丁丬丫丁嘁巙巹业巆丄义丟巗巪巪巾丫丼丰东上巿万巡巪巳丬乚倱伏侴伷巄低嶫亊一噾嵨侽岩伄巁乷亥嵱峈乍嶶亇岦巊峇佹巈优代嶊嘁嶃巿嵗仾巶已峜嶈亄巒亏伃件义亾丮峊嶱侩岆嶯乷峆屔巽伝亳乃仒嶓嶔伩仒侒乃屑但巫佤屃"
    "巜巟兆仗左严川丬侎岡例佽仵侊伇伌嶔偢嶂偊伃姠仏乎両嬈傟寴侐嶦丮崷中丆体嫤嘁冬屹峄傊侀僤崍层侰备具侓崹宽峀僝亠巏屆峓勶俞倁嬺万井傞嶤仠嘁嶃巁嫋佃亙亗巚亩丽佑侵傥勪崁伽倯婅価伿嵦国丼佫光偘宄乒嵍巖侐巇峱倃"
    "崢凜嶷丨嫕崪侄婷亥嵬岹嵭乻傧佭乵仓仠丞倷奨僺兀僮嶱企凐倔俆仴仅兾崭尢业凤乥儗偣加叜嬿侺嗿峉则伏姩嫛巷峿媠娌孿傠儭婪央卶伲倣嬪尐勄墥僰嬵们厜劎劃嫞佯崠伊寇峬儿巍尩两为业嵎乃嘁嵵伄倹巇岀主巑伌佑嶺亀丗嶪嶥"
    "丝伢为乃嶾侘峿岻仫嵴左丄巜嶼嶥嶲嵳亢嵰伔嶌巶亣丳乣嵗丽嶽侓尐丧乨个巏崛左从峱产崙屐峜己亰差亹亠巅嶵巳巹嶤二嶋巂仵乌嶕业丱丬巗巸为乘且乢他专人嶠伊巁乄嶼巳人州屯乔嶹世亍丽亮巹乯久丸嘁巁嵏丆崓嶻临乫丞亄嵵"
    "丵巇丆丼丛巚丝乙巒巋嶹丘孕塖嘁使变嬴乭傔垂书婛伌差嶟仫属令僠亊宆仑丐亖叛寬伀俰丈埭姹夗妗嶲丵孁佞促嵝屸卜俐嫼下佛啌峘左嵙嬾况報份偩峪勌奉仛屔嵌崮僧岭傈侬佈乪伎佧崊宜岫乂代嵭伣与乸嶚乏巔仆嘁余亷份巸嵇剞"
    "巜佂巺丧崖伿亗僷嬜嶴亞嵩岄嵨偱亼亅匪乘婭乳估峚州争寫嶡妾仧崾巖俺嶯尹巴五屩僂伃伬岭予仌亘媄峓嵊倇亯岻嵶審亇嶇丌侐乚俆岚丌乓嵪峡僕亚媚嶮亠寂儓仓伖僕峮婧侕坢嶴切业巓傄临傡嗿佤嶃俦巗妯侢亚凲峩偨家崨伧义亡"
    "孎偤岕偊京巷峧乺吅屵兆屐丝嶱亚両仝侍倾巅嬕亙崯尖岦嘁峳乜岬侑嵍僭剫岀峣伛偹仆亀峵厗乐屧侙嶥嵃岩丂僄介嫏佃崜九僘侍兝側亄屸住仳嵭嫛巸仝巒嶩勌媂岾亨儍亟侜偁併仈仱侭偢佗巆屢巜嵮先乻丛岷嵕妐丌宀仈垿嗿岿偪字"
    "嵧亍乲乣危嵣展儞偾健傕冤倿塺巭佝佈寁傴寋嶵伺儛亏傺崊俯僘妪佗亁亮凝峮业尗且侕嵩呓匯偶巑凌嬐僁使倯嬝嵢伋俜屢僮亳坩功崔尜傡巃媼嵵傷吺伖再佩岚巣勦巃峡傧哏偧嶯俥伌善嗿嶂嵫崵勑仹嵘埦嵠巪匀凊嵱刚嵳丼七丶寷巎"
    "乘巫巣亝巈丣亩乞乙嶘丈上亇塦仑嶰嶻丬巶巢嵭仄丢嶤仐峹孴乊孩丞亪巙乛丧峤乖嶓嘁人太岠崼丈仪亱下仧嶺屳已嵇巹仍丟巨宇丕崥乂丐嶵傝儐嶆寍巏了嘁伳巶姂主侩尶主乊亯峊仉乭巔丳仿姁侏寿仆嶧傱嵬佝峰嵨丆尠局巯巫倳墅"
    "乛仍岖巿坜丬嵥万兰岸冪崉嵧亨屣凋乹僗伜嵎岔伯乜婵劦亼争偊嵑巃巒埉屯乊妪嵗仑中岸乤嶎傻孏嫌奫岟字塞亀尾亻京嘁啟匄僾亶于岄崣奮亝傝中丆剂僲佄係全侓巜峍乓就俆峋嫿亦屯嫓亭巒巗丢嶯丆岧岐巉嶘于乖屜嵸呲媾丛儦偵"
    "岻丝宕屶嵎堚剓僒丬宬价啽孔勛侳偛娮七务嶏墩寲刨佞宅丯偮刞伲俁借嘁劋乨崱崢乖儂崝儊倝以健屣俑嵶噷儓付尿仳伪寲亶寭乧屓亂嶹乡崇嶠嵰嵥巉丸亨亁仌伭崂三佌居峯乍峵例嵤尩巰岐嶬嘁嵉亨便嶥值乚价佛介嶶侠上仮宜乇侀"
    "岰乧侨屇亥乞侤嶿亙人峯估嶾嵒丢嵞丐享左僼丿伩巧冿峖亇伅亮俄巢丛佺佪乃儜巚峴仁巨妺屾伀乹巔屩乤岦嫇岦巚俘寖仞崯伖儻伴寓嵆嘁佉嵛伂孝富劯巴仨例为嵲儯仹嶍凞寈倍崂峌乃之乗嶡嶲崔嵵嵊巣予嵯仿伶亏嵇侲屹巕丶乻仈"
    "嶉丶嵳佫乾亾丶仛巊嶵巤乸孄争享嶤侼巘佩享九嶂崋嚼丸仛巆巢俿伹五崭嘁乌嶔伐之互倩嵼乾州已川孨丌佫傁偵嵡孠侔岺嵺塞娈依岬佼岲俘丈倲亜乲厵他叫巘亜侐儛嘁傯予塺值伡伃属巾予兹伬乄乐举仲兓偛仛俤偵媗婺妰侍崖嶳嶍"
    "嶋屣依三儕他岩崗巷巔州丕仚嵒巰作巢嵖东也嶡嵭丈巣丅尣云佩但嶁巰乿崗井丶丘乘川嘁丼峟巋伱嶁亐巧嵾乷乼圝嵵孠巢嵈巭乌嶈亓巤乗仜丿峕乔予嵺丏崃伷屛亅亍乜做临嶯嗿业佼巳嶬峪峢嵲乭丩巢丩宁乷嶴京乀尀佦巾嵻巷乍儼"
    "傒射嶓乭乫宊巗履傗丙巰巑峙州亰丄丧凴峄嶇份巬僃巁丅儴嶗亝亟仛且仺亊巀宥嶯個壄传三僅仪嬮孎尐些侺嵰亡俋乺乛佯嵫嶡崓崯伐孯婻倃丟嶇儮崗传巳嗿伤佘乯书嶢乜娝嶡峜七东巫巇剼伝嶇嶯嵵媃信屠射崷巄乖峍巷崑仛嶭侽巺"
    "屳乭万伒巤峇婈嘶他崔巗並嶂尴嘁嶙亭娮州估低巎崯兛峷侬丣嶍且乂亚书寤乒估尘丛岥嵅丐巶娦宰具塲久峄嵭仉寒巸寰學业尕仜丫屰仧亄仉伵九娒仴巽峈嶲峮儽乧儚嵬乼令侬乩乱寵崯买嶛倸侐嶜嶞嶹婓崵俤嵘岴侷宪壈偾孬也巭乵"
    "亙仐子仧介娒峽嘁偯乿乂巪已乷亼崳嵄嶜仧倭亚亟巘仞傔巉乓代並侣伾仴嶺乵巣巻乍丫尕巳嵫宼串仮乿佲巊亊丕义巬崳买嵯乚临嘁人崒嬨嵽估嶀两屃世傗嶯丑嶱嶱交巡乗丧乱嶓嵥丑巬丛己嶶仨峪巵乼亷九嵼丑仍倯丶五侺与亳令嫓"
    "企嶙嶸宯便岪嵛侃巄寸乱佱兕伐巟傎嬊偾峹丯两久丱嶴崊丟偙峴巽买价丳嶪嵴丅嵶客嶕嵈嶜乯巟三嘁侪乗孎亽串嫾婖嵙嵋嵽巭屠峌巡丝丌嶭巩巏嫔嵓丂丘両嶝巬亄巪巹嵛両丶乮亳丛俌巣乥巺为嶮丟巪亄丷嵠亇巡已埌巴巊丌嵟丒乬"
    "峬丧嶹丫亷亞巉峟亊七嵜主上嵭嘁嶩乳巩乔崷侶仠佞伊仾乚侷崛亙乕乷串巭孉主佄崍丘嶯川嵯伖云島亠了亣兒嘁倕丶媖乶峑二乣侓上岇嶙之崎宦嵱亗剠倓乊嵐巵亃巈巄乊万屎就亸丏亗乷巿乾乀尮伃事佊侕偎伏嚖仂住丵作们倝侬嶪"
    "仫儃嵜崢嶦傖岳傷侹凭亣嵂崫佧唶儇嶸丶岙孀巶巎妐岶個吁嬝刬嶓仉偒壭偂嗫巜亡噯崌姻儱崃乖嶁夭嗿勝乻岮巙嫘丢仄寵乇嶵嶵丟丘尊丘乫嶟丑乡仵嶋嶼崋嶰作嵣崉乒嵿丑媒伴体仪嶵嵓亿嵻仂屷嶽二乄伲亯巖佔人嘁仕丠嵮丸嬊嶏"
    "嶃岣嵍崙差嵶九伺嵄嶩仉七乱嚗媊仦巜之伉侲嶃巖俿屵事信崘孲嫮厷倱偓一嶸乤倸峨僐佮傅嵹亦巳嗿嵔丳冁冤于巂嚚倐侶丣亍屾剜巋岨嫒婶倵嫪傯嶬岲书嵧崪寪俀巒刓京亶偄佋佨乛伻峬媧从嫗份崌伄偃崷嵿做嶫仺信峬儓匌嵶嶀丑"
    "屌岧乎乒崸峡峏佝嶠峩峮峰亩尻嶀嬳乵仜嶐亻乼借峞岐屛巻峢岪乢丁仓勎岨且嘁偖仇岑伵剷佈巂嵐仢岯官孁伍嗿尻三佢丸婠嬄峎今岱嵿偲喸伃丶些崓傘伹倧峔侗峠专嬋峑屻亡尵巳嵱娨乖亰亟仔仟嶿峋崱崼嬆嶊嶸俏嶲坵堑屔併居姊"
    "嶻亂伳伻件巶嵖嶽个嘁串伋姚嶐嵦倕俴妟嶪嵴仭俥巌册匱享巘嶬峑亡咽嶎巼巀孶专企尊乙乬嵋巘崌俋工侘仮丒仳嵌屼亽以巙嶀尘乣亚娂埠嶻巅俇則峵嵷巔峲尲嶃孿刵岌嵩俛宱孛峹娊嶕寨坐俀凷崷嵗嵡嘁垔岺嫽倁媩崹屹亙丨亻嫽巊"
    "奙仳乘义佚岡则媴仵书媩伀会儙崴寰崂尯岖乩佇巵傢尽寡垺姯崯倢嵰墘偅崢崗尖仩亄乏嶛巂凂伏屭倧亓嬙嵈俶巩孛上娾峛崴嵸伦峛串嘁严人义嶧丵丞乇乥嶚崀乪予似丕亏崙亏供巸丑巀嵢巋嶅丰巡崢嵓宨嶆尾仌崙伉峼乩巰屎嵳亿嶒"
    "巓争丣巓宂已且傜仭嬘巪侃丑嫘互墠峊巖亇巣屐嶰嘁乻刚巾偕丿丕嵯世丗嶳嶪嶁们嶴巽崿与偋巠嶹乨嶹乽丛丑乎嶬嶪嵢巽岟伐仐伏峔乼嶠尧互嬖剁崱嵏偔嬸奁嬏夠嵎尲塄伸刻崡崠岢囁嘁嶂娲俵巰岞嵋俹岼伜婆岶堑崂嵝乔伍尭劶尤"
    "佾嶟嬺乓乡厮嶥媡寈屰岃件佗嶝侖屸射塦墫娌刕峬夥側峃嶊姾倲偝侼崜巨喦决密嘁亣塧宯冀嵎峵崓婸壇嵏屗値傪上娴嶗妩乫嵺倉丧伺乓嵋峴倯佡从俅但岹亇倊巠俊崃嵥崄岻他嫤嵢巴嫳丘峘倃宜伓寋岒世与嵽巐丈嵬偙亽丢媓乚伒嘁"
    "丧妡峯丶亽崜嶀嶾妊介傺嶵俛嶺巺巕尫巅仚俭与仛巳乮巈傿嵰嵇俅巐峴嶔三嶟伤巚乏乒世九巪媯亊亅伌伸侁局嶩崵尰巒峤丮嬦卾两峀傂寁域屓墳买寕媝佲倃嫉岃岅婓嘁崬囪儶偔峿嬻佭宪亹媆岏堎左嵛乔任孀叉尚倭乫妅仇俏吜云嬢"
    "寒孡尓伂傄僧伡娹寘埜域團勉巀墄倢嵆倘嬇亨僸伏巣巈厍喬尐峫崪媑嶇倉寏嶵崀嶙妑嶅婥倍信之仱嶕媡亣孌垤乮佀乣嶪巎巚偬乱习伂嶬丣対嵊傛嵍崖嵻峢伛嘁僤丼尿丢巇傌岌乬峋峥巒嵝便份嵯嶲互五丧婬勘嶶傊崋屵嶊屝妾仄众件"
    "娸佨姖也巁巒亵丽宦京世嘘亨侣仿乍峔崻嶘二亥乕左嶭嘁嶇傋乺丕巶亵乹垲吔丒左仗乾亳妠乼巿嬠巐佣嵠乔丨层孮巢嵞为峂巔寻崬儶仍嵯川傁之俉堄任七嵪佢峸巙亯乷両崐乃峞崝對嶢佚嵫価崍巗嶘予仁串养峸岰些但宧丌丕仮乺兇"
    "岱峃嘁佾仴侽巯峻嶪嶃婊峆刦佰嘁久咓孍嶖尶寽哷俦峨巧僣嵌僉堁东嵞丽仹五嶻亞俦嵶峃兆宪亍倄嵧俕嫐嗓嵝嬳完侞伏崙嵰崈媃丸嫻孡乸亼俬伤峋乩侄凘佌巒偊亽岰峮乢你屢优候体乓堡埤个偁屷喰伛尲估侹嵞佸婅埗嵊巾丹伦伔嵛"
    "嶺乌尗儁仯倢巬嵎侨宲嶦嶍崦嫅俆丒嘁尊嶎儤嵵巶冘佾唐俬倷伍巺乲侾嫋崙俳劎嶓两岼丬崫付嬡崦崭嵥低偰侬互侔亾俛俌僮俠寚伲峑審儭傉尶亢岏乔岋嬂侺嵿对峍尳屌嵪仨婵嶾併佩丂崒尋东事俭乷就伈嵽嶒峩偟嵸守嵁亚嘁嵙亖嶛"
    "伿崲嶖偠乁崭侼嵪坨丹崋亼屍嵺嘁两乯孰伋亀巡乴亂屙嵿佩乪尵伡屏峖侫习巐专嵶乘尲峷乊寤尚丩圳之寑崗峉乔侊偭亮丬亹仴侷巿乿乾嶥嶂倰嶓井"
)
SCALES = (
    0.00039924015, 0.00087793131, 0.00022279163, 0.00074323534, 0.0017101436, 0.00091346237,
    0.00065664161, 0.00061720237, 0.00045282513, 0.0005990577, 0.00055477081, 0.0012201746, 0.0006595953,
    0.00025257524, 0.00088034518, 0.00034257636, 0.00094365107, 0.00031512071, 0.00021056204,
    0.00062384387, 0.001001108, 0.00041598748, 0.0012289723, 0.0011643026, 0.00079240912, 0.00047696516,
    0.00036333274, 0.0003829081, 0.00078889134, 0.00086607906, 0.00088711281, 0.00099709246,
    0.0024707669, 0.00087591226, 0.0015296892, 0.0020904711, 0.00079750002, 0.00092209066, 0.00044518453,
    0.00052328943, 0.00075071061, 0.00069867418, 0.00085839228, 0.0005626675, 0.00038872316,
    0.0008732545, 0.00067042426, 0.00042217885, 0.00097410299, 0.001261926, 0.00087298185, 0.00076582271,
    0.0011595613, 0.0018277175, 0.00061602902, 0.0010303239, 0.0003796785, 0.00039570694, 0.0011305604,
    0.00045212984, 0.00056328502, 0.00057600503, 0.00083881943, 0.00084138475, 0.00053157756,
    0.0042713261, 0.00092318316, 0.00046625503, 0.0010153234, 0.0003894871, 0.00054061494, 0.0020881509,
    0.00077354873, 0.0019541781, 0.00039697823, 0.0012764295, 0.0010090809, 0.0012373658, 0.0028285293,
    0.00086004665, 0.0016548688, 0.00094028487, 0.00084699341, 0.00062518188, 0.0016335472, 0.0011931512,
    0.00083140162, 0.0012025896, 0.00057322322, 0.0040226467, 0.00068801944, 0.0017946267, 0.0013118968,
    0.0015585695, 0.00074020872, 0.00069279718, 0.00054394291, 0.0019046529, 0.00094521866,
    0.00089887087, 0.0015930977, 0.00091615069, 0.00116297, 0.00058020576, 0.00068745227, 0.00078023289,
    0.0018827175, 0.00057979266, 0.0023784186, 0.0014315745, 0.00028237505, 0.00089141791, 0.0009228409,
    0.00079872186, 0.0017419693, 0.00094437168, 0.0022922053, 0.0026268307, 0.0037325656, 0.0013869472,
    0.003390684, 0.0018631112, 0.00053749216, 0.0073042591, 0.001048927, 0.0031707298, 0.002724251,
    0.0013401574, 0.0017087171, 0.0017402654, 0.00080271909, 0.0028264602, 0.0031400342, 0.0018101521,
    0.0010494405, 0.00060960866, 0.0030053293, 0.00072404812, 0.0049061095, 0.00068831269, 0.0041927141,
    0.00080408074, 0.0019530625, 0.006067127, 0.0014950562, 0.0010550702, 0.00075344881, 0.00039567269,
    0.0018398339, 0.0043836371, 0.00083104789, 0.0015775219, 0.00091240276, 0.00092143577, 0.00068299857,
    0.00055518973, 0.0025982601, 0.0012823069, 0.00090655615, 0.00063360744, 0.0013197181, 0.0010283894,
    0.0018894486, 0.00075729151, 0.0023532496, 0.0015564202, 0.0011629984, 0.0013057132, 0.0013549082,
    0.0021483938, 0.0015974249, 0.0024705853, 0.0014794995, 0.00062328944, 0.0019446873, 0.00076962705,
    0.0013232563, 0.0013094348, 0.0013499205, 0.00077393814, 0.0030022045, 0.0024727618, 0.00064965273,
    0.00164444, 0.0018828501, 0.00060063222, 0.0017087309, 0.0018592256, 0.0017488176, 0.0010217053,
    0.00090127491, 0.0012256914, 0.0019284006,
)
BIASES = (
    0.14797147, -0.14542499, -0.25680503, -0.20191842, -0.16965015, 0.24305502, 0.28704536, 0.66638362,
    -0.037783507, 0.18875293, 0.33247265, 0.23371693, -0.20391829, 0.11436632, -0.067872278, 0.078543268,
    -0.20479432, -0.045558304, -0.12408128, -0.14790231, -0.34609103, 0.042894121, 0.17599933,
    0.053052507, 0.44243002, 0.16328456, 0.060127266, -0.035141613, -0.014098645, 0.15145558,
    -0.10792407, 0.069085464, 0.061054658, -0.0096390294, -0.055459358, -0.088749938, -0.10995501,
    -0.18825263, -0.11017188, -0.060269788, -0.23796317, -0.22282997, 0.051555131, -0.13226306,
    0.030892881, -0.13365602, -0.036533486, -0.098073155, -0.30263516, 0.031083824, -0.1157722,
    0.2039503, -0.16344042, -0.13703495, 0.027231168, 0.0012098058, 0.14402694, 0.095104441, 0.32264516,
    0.15735354, -0.12509727, 0.13273986, -0.134446, 0.45949498, 0.22418654, 0.0043083155, 0.25779331,
    0.023603013, 0.036296628, -0.22945483, 0.0070242584, 0.15507014, 0.055537764, 0.047751337,
    0.16461623, 0.39958856, -0.12667143, 0.21616721, 0.18290314, -0.49340811, 0.074350238, 0.1445403,
    0.25789893, 0.18899429, 0.034603402, 0.13458319, 0.29040238, 0.12613514, 0.1078674, 0.014752026,
    -0.089936674, 0.27060008, -0.056223292, -0.29726252, 0.38617414, 0.30586112, -0.0047260909,
    -0.084254585, -0.014359728, -0.46739525, 0.17931861, 0.07220909, 0.15557782, -0.18424225,
    0.089787312, 0.13408329, -0.11956824, -0.038643178, 0.028287841, 0.22758015, 0.1960047, -0.022347124,
    0.4508391, 0.4881182, 0.32434437, -0.18223622, 0.051057931, -0.1464705, 0.1393593, 0.12111112,
    0.39797467, 0.41699719, 0.20314373, 0.12035834, 0.27936524, 0.25309899, 0.40071148, 0.1030555,
    -0.012229318, 0.16286246, -0.04905564, -0.025368271, 0.26136437, 0.22752741, 0.02402794, 0.14877099,
    0.5882684, 0.077501029, 0.033443976, 0.086765915, 0.088204093, 0.041958805, -0.16851878, 0.15357262,
    0.54167622, -0.21003354, 0.41784984, 0.2828266, 0.50904775, 0.030060131, 0.099967524, -0.37070894,
    0.10342999, 0.59197652, 0.42200914, 0.58668697, 0.13376908, -0.40222284, 0.26157001, 0.30995691,
    0.35770008, -0.015945077, -0.18582676, 0.16633131, 0.43270475, -0.10645874, 0.075873561, 0.21585886,
    -0.035487603, 0.2635355, 0.16559108, 0.05901251, 0.21097225, -0.065072328, 0.19862413, 0.16835429,
    0.037709612, -0.22350785, 0.3610051, -0.039542153, 0.053966057, -0.18306728, -0.29747513,
    -0.048970442, -0.036806196, -0.22280578, -0.46701416, 0.090288639, -0.015173167, 0.065338165,
    0.029978661, -1.9421921, -2.896029,
)
# <<< parameters

CODE_BASE = 0x4E00
SELF_DIM = 14
ENTITY_DIM = 14
KIND_SHIELD = 1
KIND_BOOST = 2
POS_SCALE = 1.0 / 10000.0
VEL_SCALE = 1.0 / 1000.0
PASS_SCALE = 0.25
AIM_DISTANCE = 10000.0
OTHERS = ((1, 2, 3), (0, 2, 3), (3, 0, 1), (2, 0, 1))
"""For each pod: its teammate first, then the two opponents (own pods are 0 and 1)."""

Layer = tuple[list[list[float]], list[float]]
Inputs = tuple[list[float], list[list[float]]]
"""One pod's policy inputs: its own features, and those of the 3 other pods (teammate first)."""
_NETWORK: list[Layer] = []
"""Encoder layers 0-1, head layers 2-4; filled on the first turn."""
_RUNNERS: dict[int, list[int]] = {}
"""Per player id: the runner pod (0 or 1) of each side, own side first."""


def _unpack(text: str, count: int) -> list[int]:
    """The first `count` signed 12-bit values of the packed text (one character each)."""
    codes = [ord(char) - CODE_BASE for char in text[:count]]
    return [code - 4096 if code > 2047 else code for code in codes]


def _network() -> list[Layer]:
    if not _NETWORK:
        encoder_hidden, embedding, hidden = SHAPE
        sizes = [
            (ENTITY_DIM, encoder_hidden),
            (encoder_hidden, embedding),
            (SELF_DIM + embedding, hidden),
            (hidden, hidden),
            (hidden, len(ACTIONS)),
        ]
        weights = _unpack(WEIGHTS, sum(inputs * outputs for inputs, outputs in sizes))
        start = row = 0
        for inputs, outputs in sizes:
            rows = []
            for _ in range(outputs):
                scale = SCALES[row]
                rows.append([value * scale for value in weights[start : start + inputs]])
                start += inputs
                row += 1
            _NETWORK.append((rows, list(BIASES[row - outputs : row])))
    return _NETWORK


def _dense(layer: Layer, inputs: list[float], relu: bool) -> list[float]:
    rows, biases = layer
    out = [sum(map(operator.mul, weights, inputs)) + bias for weights, bias in zip(rows, biases, strict=True)]
    return [value if value > 0.0 else 0.0 for value in out] if relu else out


def _policy(own: list[float], entities: list[list[float]]) -> list[float]:
    """The actor's outputs: one logit per action."""
    network = _network()
    context: list[float] = []
    for entity in entities:
        embedded = _dense(network[1], _dense(network[0], entity, True), False)
        context = embedded if not context else [max(a, b) for a, b in zip(context, embedded, strict=True)]
    hidden = _dense(network[2], own + context, True)
    return _dense(network[4], _dense(network[3], hidden, True), False)


def runners_after(previous: list[int] | None, passed: list[int], dist: list[float], first: bool) -> list[int]:
    """features.update_runners: on the first turn (or with no roles yet) the pod ahead (more passes,
    then nearer its next checkpoint); later the other pod takes over only once it has passed more
    checkpoints."""
    if first or previous is None:
        runners = []
        for a in (0, 2):
            b = a + 1
            runners.append(
                1 if passed[b] > passed[a] or (passed[b] == passed[a] and dist[b] < dist[a]) else 0
            )
        return runners
    runners = previous[:]
    for side in (0, 1):
        current = passed[2 * side + runners[side]]
        other = passed[2 * side + 1 - runners[side]]
        if other > current:
            runners[side] = 1 - runners[side]
    return runners


def policy_inputs(
    observation: dict[str, Any], runners: list[int] | None
) -> tuple[list[Inputs], list[float], list[int]]:
    """The policy's inputs and the frame heading (radians) of each own pod, and both sides' runners
    after this turn, given last turn's (`runners`, None at the start)."""
    pods = [*observation["pods"], *observation["opponents"]]
    checkpoints = observation["checkpoints"]
    count = int(observation["checkpoint_count"])
    total = float(count * int(observation["laps"]) + 1)
    first = observation["turn"] == 0
    x = [float(p["x"]) for p in pods]
    y = [float(p["y"]) for p in pods]
    vx = [float(p["vx"]) for p in pods]
    vy = [float(p["vy"]) for p in pods]
    passed = [int(p["checkpoints_passed"]) for p in pods]
    cx: list[float] = []
    cy: list[float] = []
    fx: list[float] = []
    fy: list[float] = []
    heading: list[float] = []
    for i, pod in enumerate(pods):
        nxt = int(pod["next_checkpoint"])
        following = nxt + 1 if nxt + 1 < count else 0
        cx.append(float(checkpoints[nxt][0]))
        cy.append(float(checkpoints[nxt][1]))
        fx.append(float(checkpoints[following][0]))
        fy.append(float(checkpoints[following][1]))
        if first:
            heading.append(math.atan2(cy[i] - y[i], cx[i] - x[i]))
        else:
            heading.append(max(float(pod["angle"]), 0.0) * (math.pi / 180.0))
    dist = [(cx[i] - x[i]) ** 2 + (cy[i] - y[i]) ** 2 for i in range(4)]
    runners = runners_after(runners, passed, dist, first)
    is_runner = [1.0 if runners[i // 2] == i % 2 else 0.0 for i in range(4)]
    inputs: list[Inputs] = []
    for p in (0, 1):
        pod = pods[p]
        cos, sin = math.cos(heading[p]), math.sin(heading[p])
        dx, dy = cx[p] - x[p], cy[p] - y[p]
        ax, ay = dx * POS_SCALE, dy * POS_SCALE
        bx, by = (fx[p] - cx[p]) * POS_SCALE, (fy[p] - cy[p]) * POS_SCALE
        ux, uy = vx[p] * VEL_SCALE, vy[p] * VEL_SCALE
        own = [
            ax * cos + ay * sin,
            ay * cos - ax * sin,
            math.sqrt(dx * dx + dy * dy) * POS_SCALE,
            bx * cos + by * sin,
            by * cos - bx * sin,
            ux * cos + uy * sin,
            uy * cos - ux * sin,
            float(pod["shield_cooldown"]) / 3.0,
            1.0 if pod["boost_available"] else 0.0,
            is_runner[p],
            passed[p] / total,
            1.0 if first else 0.0,
            1.0 if passed[p] == total - 1.0 else 0.0,
            1.0 if passed[p] == total - 2.0 else 0.0,
        ]
        entities = []
        for k, o in enumerate(OTHERS[p]):
            rx, ry = x[o] - x[p], y[o] - y[p]
            ax, ay = rx * POS_SCALE, ry * POS_SCALE
            wx, wy = (vx[o] - vx[p]) * VEL_SCALE, (vy[o] - vy[p]) * VEL_SCALE
            ux, uy = vx[o] * VEL_SCALE, vy[o] * VEL_SCALE
            bx, by = (cx[o] - x[o]) * POS_SCALE, (cy[o] - y[o]) * POS_SCALE
            relative = heading[o] - heading[p]
            ahead = (passed[o] - passed[p]) * PASS_SCALE
            entities.append(
                [
                    ax * cos + ay * sin,
                    ay * cos - ax * sin,
                    math.sqrt(rx * rx + ry * ry) * POS_SCALE,
                    wx * cos + wy * sin,
                    wy * cos - wx * sin,
                    ux * cos + uy * sin,
                    uy * cos - ux * sin,
                    math.cos(relative),
                    math.sin(relative),
                    bx * cos + by * sin,
                    by * cos - bx * sin,
                    min(max(ahead, -2.0), 2.0),
                    1.0 if k == 0 else 0.0,
                    is_runner[o],
                ]
            )
        inputs.append((own, entities))
    return inputs, heading[:2], runners


def most_likely(inputs: Inputs) -> tuple[float, float, int]:
    """The policy's most likely action of ACTIONS (the first on a tie, as torch's argmax)."""
    logits = _policy(*inputs)
    return ACTIONS[logits.index(max(logits))]


def _pod_commands(observation: dict[str, Any]) -> list[dict[str, Any]]:
    key = int(observation.get("player", 0))
    inputs, headings, runners = policy_inputs(observation, _RUNNERS.get(key))
    _RUNNERS[key] = runners
    max_thrust = float(observation["max_thrust"])
    commands = []
    for pod, pod_inputs, heading in zip(observation["pods"], inputs, headings, strict=True):
        rotation, share, kind = most_likely(pod_inputs)
        direction = heading + rotation * (math.pi / 180.0)
        thrust: int | str = math.floor(share * max_thrust + 0.5)
        if kind == KIND_SHIELD:
            thrust = "SHIELD"
        elif kind == KIND_BOOST:
            thrust = "BOOST"
        commands.append(
            {
                "x": math.floor(float(pod["x"]) + math.cos(direction) * AIM_DISTANCE + 0.5),
                "y": math.floor(float(pod["y"]) + math.sin(direction) * AIM_DISTANCE + 0.5),
                "thrust": thrust,
            }
        )
    return commands


def decide(observation: dict[str, Any]) -> dict[str, Any]:
    """The policy's deterministic action for this turn."""
    return {"pods": _pod_commands(observation)}


# >>> codingame: only in the CodinGame export (a decide bot may not read input())
CODINGAME_TIMEOUT_TURNS = 100
"""A player loses after this many turns without any of its pods passing a checkpoint."""


class CodinGameTracker:
    """Rebuilds the JSON observation from CodinGame's lines: counts each pod's passes from its
    next-checkpoint changes, each player's turns left before its timeout from those passes, and its
    own pods' boost and shield cooldown from the orders it gave (opponents' boost and shield are
    not shown on CodinGame and are not policy inputs)."""

    def __init__(self, laps: int, checkpoints: list[list[int]], max_thrust: int = 100) -> None:
        self.laps = laps
        self.checkpoints = checkpoints
        self.max_thrust = max_thrust
        self.turn = 0
        self.next_checkpoint = [1, 1, 1, 1]
        self.passed = [1, 1, 1, 1]
        self.boost = [True, True]
        self.cooldown = [0, 0]
        self.timeouts = [CODINGAME_TIMEOUT_TURNS, CODINGAME_TIMEOUT_TURNS]
        """Own, then the opponent's: reset by a pass, then one less every turn (as the referee)."""

    def observe(self, lines: list[str]) -> dict[str, Any]:
        """The observation of this turn from its 4 pod lines (own pods first)."""
        pods = []
        count = len(self.checkpoints)
        passing = [False, False]
        for index, line in enumerate(lines):
            x, y, vx, vy, angle, nxt = (int(value) for value in line.split())
            passes = (nxt - self.next_checkpoint[index]) % count
            self.passed[index] += passes
            passing[index // 2] = passing[index // 2] or passes > 0
            self.next_checkpoint[index] = nxt
            own = index < 2
            pods.append(
                {
                    "x": x,
                    "y": y,
                    "vx": vx,
                    "vy": vy,
                    "angle": angle,
                    "next_checkpoint": nxt,
                    "checkpoints_passed": self.passed[index],
                    "boost_available": self.boost[index] if own else True,
                    "shield_cooldown": self.cooldown[index] if own else 0,
                }
            )
        if self.turn > 0:
            for side in (0, 1):
                left = CODINGAME_TIMEOUT_TURNS if passing[side] else self.timeouts[side]
                self.timeouts[side] = left - 1
        return {
            "turn": self.turn,
            "player": 0,
            "laps": self.laps,
            "checkpoint_count": count,
            "checkpoints": self.checkpoints,
            "max_thrust": self.max_thrust,
            "timeout_left": self.timeouts[0],
            "opponent_timeout_left": self.timeouts[1],
            "pods": pods[:2],
            "opponents": pods[2:],
        }

    def played(self, action: dict[str, Any]) -> None:
        """Apply the engine's rules for this turn's orders to the own pods' boost and cooldown."""
        for index, pod in enumerate(action["pods"]):
            if pod["thrust"] == "SHIELD":
                self.cooldown[index] = 3
            elif self.cooldown[index] > 0:
                self.cooldown[index] -= 1
            elif pod["thrust"] == "BOOST":
                self.boost[index] = False
        self.turn += 1


def play_codingame() -> None:
    """CodinGame's loop: the track once, then 4 pod lines in and 2 orders out per turn."""
    laps = int(input())
    count = int(input())
    checkpoints = [[int(value) for value in input().split()] for _ in range(count)]
    tracker = CodinGameTracker(laps, checkpoints)
    while True:
        try:
            lines = [input() for _ in range(4)]
        except EOFError:
            return
        action = decide(tracker.observe(lines))
        for pod in action["pods"]:
            print(f"{pod['x']} {pod['y']} {pod['thrust']}", flush=True)
        tracker.played(action)


if __name__ == "__main__":
    play_codingame()
# <<< codingame
