"""A podracing bot exported from an Arena training checkpoint: the search bot with the trained
policy as its prior. One file, standard library only.

Two parts, each the platform's own code: the policy (services/trainer/bot_template.py: the
checkpoint's weights, its features and its forward pass) and the search bot
(shared/games/podracing/search.py: random-mutation hill climbing over short plans in an exact copy
of the referee's physics). Every turn the policy's most likely moves, played out over the search's
horizon in its model, give one more plan to start the search from, so the plan played never scores
below the policy's own. TIME_BUDGET_MS is the search's time per turn.

The glue below is services/trainer/hybrid_template.py; `arena export --hybrid` puts the two parts
in place of its platform imports.
"""

from __future__ import annotations

import math
import operator
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


# ==================== the policy (services/trainer/bot_template.py)

# >>> parameters: written by services/trainer/export.py
SOURCE = 'latest.pt: iteration 2444, 38,625,280 steps, stage league'
SHAPE = (32, 16, 64)
ACTIONS = (
    (-18.0, 0.0, 0), (-18.0, 0.5, 0), (-18.0, 1.0, 0), (-9.0, 0.0, 0), (-9.0, 0.5, 0), (-9.0, 1.0, 0),
    (0.0, 0.0, 0), (0.0, 0.5, 0), (0.0, 1.0, 0), (9.0, 0.0, 0), (9.0, 0.5, 0), (9.0, 1.0, 0),
    (18.0, 0.0, 0), (18.0, 0.5, 0), (18.0, 1.0, 0), (0.0, 0.0, 1), (0.0, 1.0, 2),
)
WEIGHTS = (
    "嫨呋凩娦巉俕丏乖丞嬵剾亷嗿仕巾嘁倭並宄乡偉万巓嶌墮丏娫亿储峪展妴塀刹咓巼丁丒巕吴妓嗿乃傅嘁巗傋崡対嶸丗伹冘已寥体嶰嘁屗川巏巅崨巕巬巭巳巻块乪侐嵆卑巆巳人巘丐丈巿巻丂嘁孈屃凩凨么嵷乔伉丂巠仂嶑乏嗿崸寫乽"
    "嘁东嶕崰嶦乍巾侂巍丘尭嬾倨嘁凤峸嬵作偫亁巘佤垰巍僉仿嗿嶓佄傶业孥巽巡嵷厪嵆巺墸岵嗿巗峏兏巣娴且且巹台丸巵俳嫹崮丧嘁丘嶅嶳丑巭巹乣嶍巬峙伦嗿岧堒仞亷了嶆业巼乐丯丏夥儛媪嗿崜寿俶剂嵨峑嶲宭勧啨乘养偎嗿乀仸"
    "儑嵟孼己丳侾叙丛夫乫也仂嘁乸丅仒崻主己堧兦下儃仯巅嗿乊巄僟且嬴工巽巃启丂失亘僬亲宇儬嶓媔丆州丘倧佷义嗿僾亭寯侊佃婒寒厊乬崢偖寮嘁俣办刀嗿噠乁乙乒乿巤业巘丝巬娧侭凤嶖傢仸嶪崫书丩並僾嵴丂嘁伧嗿孞乣伬份判"
    "定嵲伹嵼不嶼嘖嶘仞乒嘁丌丱崴巏三丛工巹丁尷佉孻倠嘁巕丱崘丅差丘巫丝丁嬲倥孭侭嘁嵼习佨嵘专巸居嶻丑亾嶒主一寱伬企买媽嶘丂嵕崁娿嶷嘁嘚嗿仈巂侏嶰丹巘不巯丱三厪丫偸吭偑亅偩乼屘乨巖侒冖丢嗿享屣嘒嘁丐嵸嵝嶲丄"
    "巟巷丘巳嬊倏嶟嘁巈嶳嫮巜偻上两巩堄巢岰崂巡侂叾乇巧二嶸巶丂巜丒丕嘁峢尿堞嘁丫巁嵈嶪七川左临万家偠巬已丛嵮且嵢嵎专乺嵇両峡亱亂丄巃嶺崢嶺信乡嵓嘁峐乘嶴乜仮佫巪乫崑伃尶件巘塨嘁娑亣巛巫伙侈呀乬嶨久嵎中嵺亦"
    "峯仪佞嫮屖嶚优仸媻候周傽岫久巍万夑嘁嵾嵯丕乺嶙巖佹巶巏乍代丨嶘乁丄嵤偱媨义且孕嶦倕工勋僛屶倒亰亍已岭嶵届会亀崰埔仾巼崞嵡嬕巸嵼亚伯両嘁井伍且巰差亅嬽巜岟嶟下巯份巃仡屗亃峠峬付亲嵪乥于俬嵸伈嶴伙京嵏何嘁"
    "尵倦佝崜孆仨伔剪巁嵑巪中巡乪巂下巨亄崀巤婅乌两巌丅么嶅孇嶫嶩佡嗿与丵丘两媫乙巡俄仇孒乑亵峜塼容嬾崱婷寧仝况嵖嵌宜俲佉典倂匱偸嗿八岺宠佤嵨媞來俁坔巿偐亷兤乩奂嶒媞尉产岜刄傾俓嘁屏卜嶟夽傲傰嵰偢巗丯仅岹岕"
    "仧寐倃墍岘剄侄巡嶅崋巷嘁嶿岓乷宻僐峇偃尵乻亨仏净偩丑劅全交峃从姫巶媆嶠俙巵嵢嘁亼主屮巽伢亢岜丛促俣孃为佳嶀佫俁嵾仒佬三嬀亚侸作仈崵巠丈奛嶤丠嶻乃宛岟且崟巣丵丷巪伞乱东巋丂嵡嶽劺工嶀傷匠丟丠嶹嶫嘁嵟巈姞"
    "乬卥佽喆乫填宪寴岇仉屟俀久买嘁岍俣孼俚偮仜嶔婪井妡嶗峸佊佹媡冝剪岷噝川屺巬嵌嬏堾促丁岧仦刃嗿佄垬寅岖孚僳伏嶀似啀岻好嶵伶剟吸亳寞仱巩佼峋嘁夭安屇乭峗乙寏崊丯分岂媪嶑巺何乪伙乎嫅乜嵧之崅丠並乼倲孅婨侱岃"
    "丩婾孅堑丟勺嘁媩儣乒凬孰峑企己剀典崎加宅咉妽丒宜俣傜冚丞娺岿巨佞州塧乇屫崰展丛垑嗿婸佽值屈寵尣以崼吜农冿依亹亁刮伊巾刉嫮媏傁嘁寀佫勲嬮嶑嵾値嶥僂娨业嶭嶣一丁峗串们嵈嶌佳嶑了丙丑下崼工业乵巭巧尥佂丙丩嶿"
    "丐伺个差仩崼嶉嗿丼價峹夐价巿嫹屝崧倂凹伎丏崃伭乆巳岷嵴丼井巨乐嫨工乍墁乼嶴一亮姣亨巪也巁凓娢丸丑嗿上侉兯匩巬巼婽嘁巬伃嶍亰向峄嶳峰亳仓乫乺仴嶍仡尭峋仓崰嶼尨倌伢嶾不丶丙巛巖峋巉丶嵵与岼嶖与偃刨嗿崕嶖寋"
    "倐二巆嶝囱仦岩叕乍佻峦嗿乞乇尾丘宻嶱左亢巪伜嵝万三丣丘巺巆三丣巭丙丼丁己巴三工巇壺嗿咙巳乣嶖家乿且寳偆估嵐嵓專侗偰亱侭孂專侽偂姡婞伫亏寑佦俀唔嘁宠並丏寁傫巐壾丁丕嶌乵巷下巸丈巴巻已丬巜巙丷丆己巧巸巯下"
    "宨乸崐嵓嶴嶱亀仚峢仯崐儾孩书官争傯与寧噉嶪丮动佶值勇仇嫢嘁崣墟叨冑巳丢倿嘁保俥宬乹婃寫京勭侖亡尜嵘夫乍垃仳岌乖屉偱宍孪僼巭巠乨丒巰岔嶷串乞嶡巻岞巡州嗿巚崰巓也冩巺嵛峧嶴寛侃乓乞嚃伥嗿刏峿媎垢嵒屐三奈伒"
    "巃卜可巤乄崇伶亹峸嶱崅嬯岏冤峺仑尢巇孀崯僿嘚佛嶈事凤咁下之仗嶈嗿嬓巘嶃嵵丳巨巀峞乕丕上今嶿任丛巧丹嵭妝嗿喕嶂乗俇宀孡仳丙巑塘崤丶嶧崥佘嵜丑儩乐侒乛嵻孤兒住嵘宩丢嶍伡嘁剸埁剦崻嶂嵯亅巳岀娺串巭嶡巕巩嶘嶘"
    "些嶗巈仮乇巕乯巋巏崟導宕嘁巅川墕佂乾嶏己亅宾嵬巯乛互乂巵嶹嵠巋乫俠乂乌巆巺峩嶝万嵣巙亂丌丵佹嫒寶今业乔匽亭差尘仰崞嘁巤巐劉凨壼嶌凪峣仳嵆凃亀乛嗿乕巻一巋嬺一巿一巽巟一丁巿丅一巿巻丅丈丄丅丁丂巽一巽丄万"
    "嗿嶔嶨亇亚岲峬乒嫞亥仗姷峻丱嵋丫丑乇丢巅巃亓仩伦峥嵅巕嵖崏峣咖坱嘁巜嵲亶也乾宐亯乄女屡嶣僒巹嶁崭峁云乎崹丅儠凯峅崅尧嵂乚喋偨嘁巑已乙嶝丞嶼乵巣儙崍乀估乼巈丰乔巳嶴峫乽伂丅崀乼嵬對崘嶣崰仡嶇巁个娈崧仯坂"
    "丂叮嵉娤傺儸就崘妣佺偸宊岱崒嗿嫒儳伆刢喙丿乏嵽乚中嬒峞嶖也州专塾巈差华屩嬸僑岻偬儘嫡佀伓嗿壸企峯屧巡傭仇嘁亱崫侚丧丒嶯乥巰佅寧丆丹巭巨丆州巯丸嶥巴乵两丌丠一巰嶯嘁嵜唈乭义岉嶎州尦争临丧僽乎崭作巰嶴嵮屼"
    "崢嵂倘侼假宷仺岲嶅乔僦嗿峐巘丂嶒嫯巰丙丄丒崺丑巷业下巭巶巰巶巵巧巣両丽巔丑巆巴巨侥劔嗿嵇尰寠咄巜儾佇岰喉娢丵伷伕嶷巃仢官亲崠仿峴峾崦傓乏屎岤丏三买並丁嶒仃巖乗嶺巿崦嶈丌刬乾峥嗿亗嶊孎妛寓嶷尊乴嵇仐嬝亲"
    "巍丨巨丆巖嶙仴丬世工巖屄巓中巴嶸嵊嗿丮巗嶪伌巶已举哽媚予壜乺丿丟乨丕业俅乒嵛丬丆巛巺嵾丟屮亖嗿峈伀嶍屳伹峟己匎冷巊仕屨峾嶏嗿屮丁巿亲嬡丑丑丣巳嶿巬丅丐三三巸巤万七巪东丹巭巬一已巔巡乗巹乒巷七係丏乀丽乙"
    "乒媈丅巂奦嘁史嶋亣刉娖尧夫丟嚒剿倦俯偘寯嘁仧岶于巾冽嵙並巖乔巃凡嶖丈丳两巉巶嶯巙乊嶕丄乫巩丁乕丞嶞嵂尠佗佃嶊嶡個峰屳嵞嵶低嗿嶬巹嶇丯崸屌侫仅嶲巣价峪巾婵债仍倠巡嗿喩埸嶾乩尔嵆巤崰乖嶾全乙乨嬰差巉巄嵅屘"
    "仆嶹仮伜互崻両个侸嵰妎嘁卙巟嵷伶冴侻俀峵七峐巇巊巜侾亮增伜夁崯傒億宕倜巄岧尀买倏巐巵举差巼亣巗巺严巑巅岢丈丼嶖举元工乑巘屸乹乀巹嘁仐己佢巇嶟屉刻仢亪嗿亷峒巯巽丰巹岈嬚下丕州巶丐嶴巡巜嶭丝乃巖一七巰巇巗"
    "寑嘁嚅巋巡傹侸巧婉乊巗嶤巏巩巹嶲丁巧嶋丏巟嶜且伯嶒巅嵷巖巄巹嗿導倪巪巧孕仯丕与么嶴尋丙丮嶴丢三巸巒丄巩么丒习个嶻万嶸巷嶎劽冋傎伩伵嶽富嶿伔巨嶠嗿崵乍伺人屲崸嵰姝倍屳凛佰伮嶷侉伀丱巹巌嗿嶏一巾丷嬰丂岡丁"
    "丂巗上丅丁丂丁一巷巽巾七巿丄一七巽巿丂一宠寠劳下丨嗿崸巢俯姊佈傺丅妃岼乻冨丿孵匈击定屭岛將嬭奡仳于崉嘁対嬉巙巽劬享巻巰两巤嵧嵦下巔巷丐巳巯丆东丒丆乄巾巽巿万並巇勑嘁媭丠巬岟儹巄妷乮巡伔佬与工乓巼巺丆丢"
    "丟巰丂乗丞巘串川丑崩万巽丑不且亂巾丏丌巓丁僊巷丄已刚嗿丌巟孼偣九嵔巭崌亶峚南嵯乒崙傒倹么佗崄凜倄佰嵨乹嗿嶻嵙丷丒嵨峉亟亖巯傘峦崼傁嶳岤嵦乳乭塹嘁墰嶧巵俊佇崞亂体嶡崡两丢交嶮巣丄崵丕仧伔亚亿岺崤仯嶀屒尭"
    "宖劌奩丰三册崈岹岢冯岨举佭仫伱崮亴嵁塧亸傸婗岹嗿以巷岰展嵠嬢儳嗿峢巾丄嵒嬨巿崇乆巷巓丙巶丏一巶与巫不世巬丄丗巰丛丁巶巺巩巕丗亭巙巔侽冒巽买嶾巵佻巐嶯嬕倴嗿嶽仜堮夏巶峫嶣堋厶巪孵傣寍卖俆嗿丣丘寛嶄业丂巽"
    "丗嫂巓巵且巊一丂七专丶巺丢巍巠万乂丒巢巺巸嘁媨主专佤儨巘巭万巣仗嵱巽巬丆巴不巯丐差巙串丯巓丌两丠州嶹乻乤丁巸丵倅屐崀巜且崵丈峂巉丅僷係嘁仏宮峱丟屬乾仈佪侼审丑尦妃嘁刮丒巻亦僚丝巻丩丑婽崮业丱左巬巢嶫乢"
    "乲乀丿乎巌下巛巽巧嶽儣嬻孏串嶡嵪崠乆兗吘壗僋乾伉伝岃任嵽嘁丈凂壑層冁伉俅宴巓巵字嶼來侥亻巺冟俓尜伎亜了勭俙乗嘁伾凝俏乪侩媬冝儵嵢俟咝岻孕主実嘁孰向个嶭侑僵嵛嵦亥举巭亙中寱乜嶰己嵻屿乄嶒巾仛个巺嶴嶂俜嶛"
    "仵万嘁女巶偣巼巿嶽乶巈岯媁专巪丆巺下嶸巌丧嶿巹乲巿丐东巶巩嶈媝嘁哌嵘嶉嶯剾嶴乫層仅俩崶嵰岽亶丛丣京尡亵峤屿專儩嶖仪屩仠互倉嗿下巾巿嵫孏丏屦丁丄亭专巶与巻巷丅巹丂巳丁三万己下巿巾巽七嫩嗿峹巂巺傟寞下巒丼"
    "巰岨三丘乊巫巣巡巳左下嶼习乎巼左乀巸嶰嶵兇吩俐丵仆婔孧倐崛代巫嗿圵嵽办丿乜坱侸夗佄儥凴与俵嚮刄媣崳巾嗿岲儛丽丕夻事嵾亵上巢哑倴丑丑丑巨已巜嶞巿嶃乾亂巬巟七丧嶱丂亘屫姲嵹召中偋崧嶝尺創伡丬促事巒嵯仏巚岗"
    "嵨妶峎乓嵲人乘崟嗿埭峈儃嵯嶅上亱卩一崄侃嶧丸嵒俄侐噾巍伻岰了側丄巎伹傑佫倅將巭孤乱崨嵁崇串儉嶋巇佸嬙巀北嵫嶔嶰倃仰岆嶑仞丣堄冔們亟債但伕嵋岛左崯偸嶜嘁倭亹孳屙俤岝且俒亰亘伻就丧唑仫嶫傿仮婼匹峲剙巘佯伛"
    "佴偙会崹偵妪乆嵮丳俲侁侏串嶚乢嶯伱丱嘁巬仇尬亊俐与巺嵂丂嵃俔亙巠崼嵕促孔寁乭乴嶲崾休岦嶫嵨丈属嶙乬乚丮侠仿下丷嶹峥丱寕丈巷乀峒岵嵮亻丰伎巋巛嶽仐两候倅岬嫂傲仍俇巛寶偈乬付嶳伧侓倁峒乴佞伯倖巾凭俲奌崹京"
    "崼嵬宫堀伬崅乾伉嶬亊刄屷任妽峙临仢余害乷儶嘁俠嶓亪峏侤儈亩崼仠嵺妍対住仸嶭乢伪嵑崍巜州嵫乞嶏仹仃屶嵵巻俳嵝巼产丁乼亹巿仜嵺亹巔乶嶸亰仛亍巩巃伒岶佳嶓娐岍丣丬崷婠屏乏乗主伟乄亩岈嘁仚妜佞亊丏京乩乾嶱东仓"
    "仅嵱严丐丵乘妭岫不嵌丽事丷岟一严于室亐巳乐丳嶈仲巓佺巈巈乩丩佗乢娗嶈丗峷伝巭崟乣且嬬偖嘁居島巶巄巶仿丱峬履巕巑亮乎嶃巸嵅佔亿仍乗仠且丧乁巷丈乔峩丨嶂嶛嶣丝嶥巋嵭巍嵫丹亍伦乃巈佌崽东已巃乱巽义巁佶七巶嶉"
    "专临乶巜丘巗差崷崶丈工嶤仄严丣嵽主丹丵乴丽巗嘁丿嶒且九巇匈嶭亖乣供已侸凓巎丞巄峭丱乢乙嶗巘侾乗人寚尕中嘁侕嶰丁巄仁嶛尣屧丅嵒岺嵦嶠乨嵼丼亇嶞巸峡個崀侠巸嵘伮川巄巴仃亲巘争佉匋丵丿巰崻並嶬乊产峛巵巇嶔佴"
    "丄嶘丆一崰嵭丑伴么侞巼亗佟丧已巇屏巊崠巀巭丝屚巚嵥巊产嶈己巷丟嶼丵伀巀峺亁巣丅亙工人乆嘁仆巪峩亽丨峵世三乐嬟巴丷丙巫両嶿五崗崣侼乛崒亣件嶱岧乴乼巩嬢仗価伖崬乮嵼峯佚乨乊不嶁嘁亭宼巹侠崍仍巴丩亟亲妭峜垢"
    "巉乮巻与巬乑丝巿崄亼巷仄仵崙丝寴亥寏乗产劮伟峳崪乤屧宷匌丞巒冺偷嶜嶆倄嘁倳刕傓塈寮姝偰哾俧仲嵎塏勱喢埠凚仜倉嫑孠僽丟伴亵嶏埒偛习嶙勒寂傃喱唰姭孁嗥亡乺乒咅伄丵岚匬倠岖孖巗丆巷已一巵左乃万巎丐三両巣业丑"
    "丁嘁丈丼巾丮巰巚丐嶰丁巪丏七岻一巻巾巴东乩丁乡丈巵岲巸己丬巟巯丳丶嶖己巤举巵丅両丅东不丁巓巫巼上剧崸嵽仼伵乭丩妾嫶亻婎乣崼俑峫传宧刈丗墓媚壾佥嘁岱亓仅余個孚剟婟偢崇巜嶋乀丐侃丅崐凥侥兡価嶠偲岲嫆厧侜偰"
    "仵儊嶞壖佞专崴崓吃巒崍嵝丫严丝丣峹嘁巙婃乩嶦乑巎与嵺婮乻丅寣伉乁仾亟巷侔岳亥嶞么嶵丱伌乄己一亽嵁乏丄巘巭临乨嶖两媀亜嶬巏他寱乚壟州丷嵸仳丹嵕嵿丷履亂习嫤似乯丝乄乏丗万嘁丫丠巤上嶭丳嶭乔乒仉崣嶀丮丮嶡崆"
    "亐丏州巨丸嵼乥尸侊一七嶅左中亢屟嶧予巘估屫崪乞丯互嶳产买峉丈嶔嵶乃伅予嶺丬仢丨嶆偂嶗嶕丯亯仳嶰宼孀崂寻嵐下乸个巤宬偊嵙崥岩嵾倁崠崬峮仚匆嘁两仰崕嵛以屪峠嶞丷佢乕崲使伝乊制儛乗嶺媴嶇寴之九佸倠嶤仳並书崿"
    "丁岸崿巃乡儾仟巺剅巙伊嶦嶈嶰亠丣亼嶉巿嶥宂巅丩乑巛崴做岣已巄丫俏亐屘乙亂嶿嵘之崿侯巽亏亇嶁丗亘乃巒嗿峸嵲乾伜凉嵿嶷僔巿丏亚丵万乜嶘丗岑嶗岻嶼丂岥峾屇屸峳份崤亇亜崓害伊巭亩尋俆事仮俺巋佼崴伂嵷嶋乑丄乄嶹"
    "嬄嵽侭尼伞嶽嘁巟巜亴冼嚖宍尅峔嶢伶侂下寍妐乸屳仨乚峄下丰俋嵟伶丹尝兼乸俎峐亨余价峵寮僣俊佘佽岂尨仛宻嶌嬜倮价峱厐崉冸一亄丈嗿候偍嶉乖乊島嵟巢佉傉丶佽偈凣佖唅丅屢寉嬬嶃峎嬷俯伜崏六尥乾宮封俔嵑孖亦丳差之"
    "宗上川嵓巍丿丘丌巵嵛巛世丏乽巗岟峨丼嵽亐嶜崸京仝嘁兤巒伜中丈嶇巣姬巳巨嶾亻巎差嶾些俭丑丸峝令崢嵷嶕崝丂嶵屹乁丛丄一巀巺亖不丯並乾嵌岎嶯墌乵巷丌乊仝崔嶘仏乱寠严亾代亠丅佈崔俀乯丂嶥主乒嶐岔乪亲嵟乪嘁乎並"
    "嶋巨嵾书奨丞嵠丒仝寠丌墄嵵丠嶤仟万嶭嶲峊巃仍巾媳儏亝嶻巊层嶏巷傻乔亗亊亰产乸巧屫巂対倞倹伖佖巆巙丑嵑乍丌嵇巓嘁下崞嵹巒嶾嶜巾伢佼丯圶嶍嶒嶒佲丅丩佀乻伨丳事巤仠俺巨巁嶚工巄嶒伬亳佪劤亹巢呈丕傖巎伓寖嬁乊"
    "仪丆丑以妟嶩乡寒崽丹付巐尝乴乨叺俿侀亏仒了媂崀宎嶴丝崋乚崯亶云乕伟嗿崏巖仳嶮刔嶢嵿剧人巎嶒低乧亲嶖崉守丰僪佖岬岂奖剓偁儺媩儬埬崿岆刀俀劋佛尕伽崙孿傫寷妺嫑崂仨刣偂偠岙冊凞卧宴尳傜也估僃佳嬌儃崆仃嗿娏傖"
    "兑偰婄屵倷代东嫩室孫匉嶄傑俬岗冫嶺嶨巖巋崫嶍巁嶾巜嶨乗己一嶨丵丬丕仩丌乓巷亝嶮业巈且亅乱嘁伺嶌崃嶹井丷亞媔不嶣亰举丰巭亄亻丷与乗嶭崋岭嵞嶽嵠丌峡嵮川巽丯巾丑丷巶巪偯倫佅亹嵫亴伝丨俍嘁上伷侍峂巚乮儑巜岁"
    "丟丹仠孿嵸孾匄岶嗩娉亩勴佨嶁嶄予丱乩壎侄勽伂屿務屙峊富嫶壘尚儉伓屎巹屶俫体兀峙封嫾丂個凟巔丏不巗巘巰与事丏巐丫丮乄巁东丆丯嬧丏乷乵丮巵両丂官巏丈巐丝尯串崅严丰一丆丁乓丰临崋嶾嶈巚巾巭丯乹塧巳嶗巔巭上乄"
    "下巸三嶺嘁丱巧丙丢僁崲屧仕嶭伖作兊侹呷仈屰倠嵢岿峇巇乁媚宱件亣崉丘屈峇俌尕嫃亽嗿叡仼乾崬堕嶣乼侚岕俍傂亇乑倚係崹使刂尮俺嬾峔巑媂亃宥丮峹厓嵴仵俳丮巠万嶘崻丏乔仈乆巄丼丸丣巙巿巑乘嘁丫乚丠乕工已巻丝专巣"
    "久巭尗丢專世丩丅巬丨巹专举寲嵮岶巛巖嶞巾义嵚乩嵾巃已乊乹丁巐丗嵭嶰巓巺两嘻侶乧傷僖僻乾啈仁岧他峄嶾峉佼侫伕尧亃伖丛侌巧嗿崛什云嶒婽刧倎媾寪尷五乼寀巄偈傤屼巰乷伧仮卮乹会似屆仨寁三巷嶍屴宥俜壇伓仐岢嶰崸"
    "尋嶟巕巅伟岘峯伔巾嶿乯巃乑嵬乃巍巓嘁仫仼亠巐嵵倾峗俀巘崮倬寠剞丿俗丢巑两倇嶏亲什仸偤屍孅亭嫰嶡乐令実佱宁丩丗届佻亜嶆丞丈亂佤乄丵丫巺丕巴乯巸巻亊丌巴巵丟丢川万已巓嵐中亖丆乁世嶶巫巷世丂巶己尧巫巭巰巿巫"
    "不一丬丫丁嘁巙巹丙巇丄义丟巗巫巩巾丫丼丰东上一万巠巪已丫乙倱伎侱伳巅佊嶭亊巽噼嵪侾岨伆嶾乶亦嵳峊乍嶵事岩巋峇佸巆伙仟嶊嘁嶂巽嵘仼巴巳峜嶈亂巒二伃仸乆亾丮峌嶱侧岈嶯乶峆展巻伝亴乂仒嶓嶓伩仒侔乇屔佋巨佣层"
    "巖巤元仓巡丣巛丮侔岟侌侁件侊伋伎嶕偠嵿偊伄姡仌乁丘嬑傟寺侙嶬串崶丱七佗嫠嘁冭屷峈傈佾僠崉屌侴変其侏崷宻岺僛亝巔屃峙勻俥俿嬰七亍傧嶤仡嘁嶅巉嫂佇亙亚巔亱乇余侺傳勺崂伻倮婁侣伹嵣圁主佮兒偛宄乞嵘巛侖巃峭倆"
    "崦凝嶶串嫝崦侄婴亰嵬岼嵺乶傫佴乷仐仟丣倻奼僩儱僘嶸仺凁倒侸仪什兹崶尞东准九儋偐劏叉孓侧嗿峇切伃姟嫓巯峼媯娗宀傓儥婦夳危伧倓嬩尒勅墮僸嬱仰厕剽剪嫞佻崛伍寄峣儸巤尬丘丹丒嵅久嘁嵱伅倳巉岁临巒伍佔嶻乾业嶫嶣"
    "丞伣丹乃嶾侕峽岺仪嵶左丅巜嶽嶦嶳嵳亢嵮伔嶐己亣丱乢嵘举嶽侌將並乨丫巑崞巤介峲亦崛屒峛巵亭巰人亠巂嶵巳巹嶤二嶋巃仴之嶕丙丱丬巗巸为乗且乡仕丒人嶟伊巀乄嶻巴人巟屮乓嶸世二丽亮巸乯乄丷嘁巁嵏丅崓嶺丳乪丝亃嵵"
    "丶巆丆主东巚丝乚巒巊嶸丘孕塞嘁侃収嬵乫傌坿乭婩伌差嶞们屜令僞二宒仚丑亞叜寬伀俯不埭姱夛妚嶱丵嬾佛便嵠屽卛俓嫾下佖唿峈工嵘孌决報份偤峪勈奣仑屓嵍崭僥岱傇侭佅乬休佢崀实岤义仢嵫传与乵嶖乑巖仈嘁作人份巷嵋剝"
    "巡佂巹並崖伾亚僰嬟嶸亢嵩屾嵨偮亽了匬乎婮乸伦峛川亊寬嶝妾代崿巕俹嶭尻巯互屪僂伇伬岫了仑亚媍峒嵎倃亪岿嵯寢争嶇下侑乜俉岑丆乍嵶峞僘些媙嶰亡宼儖他伖僘峲婞侚坤嶷刋丘巖傆主傥嗿佱嶅俪巔妩侤亗函峩偬宮崨伩乌亦"
    "孉偩岔偈亳巶峤乶吒屳光展东嶱亘並代侎偄嶿嬏亜崭尓岥嘁峲乤岫侒嵍僲剰屺峤伨傃仅亁峱厙乚層依嶦嵅岨万僑仓嫍佄崢九僖侕兠側亅屺佋仵嵰嫘巸仢巑嶬勉媃岻京儍亦供假佸仉价侳偡佝巎屣巠嵴児亂丞岭嵟妖丏守今垼嗿峀偮孛"
    "嵨亍乹乡却嵧屔儤傁偫傐冣偃塶巯作佌寊債寔嶪佀儙亘傻崊俥僓妳余了亳凜崃丗尔丆侟嵮呔匣偫巔凐嬋傿使倵嬛嵱休俥屹僔仄坵办崠尞傱巏媯嶄傧吴伝册佖岀巩募嶷峟傰咢偧巄俇伃啽嗿嶘嵌崧勄仪嵙執嵜巳匉决嶆刢嵳丬丅丸寺巏"
    "乖巬巤亟巋两享乡乛嶙上不争塦仔嶳嶾丬巸巣嵰仇严嶦仒峹孵之孪丠亭巛乚丩峧乘嶕嘁人太岢崼丌仭亴与仧嶻屳巴嵉巻仏丢巪宇丗崧久专嶹傝儒嶌寖巌予嘁伯巸妽丹侩尷丳之亰峌介乬巕丸任妸侐尃仅嶧傮嵬你峷嵧下尢尾巫己倲墇"
    "乞仒岛巿坢丵嵥万兰岽冧崈嵣亪屠凊乷僗伢嵎岘伱乞婹劙什亐假嵆嶽巐埒屴乄妥嵎仚並岱乩嶊傴孋嫆奪岞孖塘乾尸亹亰嘁啜勼僶亰争岁崣奫些傡丱丅刺僭伿俎兣侑巜峀之尶俄峑嫺产屰嫓京巍巚丙嶧丂岪岎巎嶓亅乑屘嵱呭媵丐儢偵"
    "岫丐定屩嵆堗剗僕中宙仹喁孌勘侤偔娨巵力嵻墮寪刧位安丫偬刕伫侽倂嘁剿也崠崘乔儃崒儆倍仜偕層便嵬噦僿仙尹们传寮亴寰书屛亄嶹乥崉嶡嵮嵦巈丹京亂今估崂丆佇届峬乍峹侌嵥尪己岒嶯嘁嵌亦便嶥倷乞仲作仌嶻侟上仮宧乇佽"
    "岯乪侣屍交乜侤嶼亖亼峨伲巂嵔両嵢丒亢巢價乃伦巨冸峕了伅亩俀巢世佴佫乂儘巘峲仃巠妶屽份乳巌屣乨岦嫇岧巘俒寗仞崮伕儵伮寔嵍嘁佂嵡伀孜寋劫巳令侊丼嵱優件嶉凛寈倌崁峊丽乇乘嶠嶳崘嵴嵌巠了嵯份伴事嵇侳屶巕丵乻仆"
    "嶆丶嵱佬乼亼临仚巊嶸巢乴孁争亩嶥俁巕佦亪乜嶁崋嚺串仞巄巟俺伸井崫嘁乌嶓伌之亏倧嵺乽巜已巛孱三佦偽偪嵠孟侈峃嵶塠娇侚岨佻岵俒丄倰亠乴厜他句巑些例儕嘁傫亄墇倯优伀屛三乼内伧乂之丱以充偐仒保偼媙媍妮侅崔嶫嶞"
    "嶎属侓丁儑仑岧崒巸巔川且仜嵔己佚工嵕丞习嶢嵮三巢丄尣云佩佅嶀差乿崖五丶丘乙州嘁丼峡巊估嶁云工嵾乶乻土嵶孡巠嵊巬之嶈亓工乖仛举峔乔亊嵹丐崂伷屛亄二乜做丵嶭嗿丘佸巷嶩峦峠嵱乭严巢丧孾乵嶵京丿寸佧巼嵸巷乌儻"
    "傒専嶑乭书守巘屡傘世巭巒峙巜亪一个凳峀嶃仼巫僃巃丁儴嶔亝亜付丑价争嶻宣嶰們墾众丆僂仪嬩孅尒亘侽嵲亜俉乹乙佫嵨嶣崖崱伄孩婶俾丟嶂儱崕伞已嗿伝何乮习嶧乏娞嶛峖丂丗巡巀剸伖嵾嶲嵴媂俜屏寿崭巊乕峆巻崆仛嶬侺已"
    "屶乫丆伔巢峊婆嘼付崗川丬嶅尶嘁嶙亭娰巢伵佔巎崳兜峸侱並嶒丗丹亝乨寤乒伯尔丗岥嵈且巸娦宰兵塵乁峄嵰仍寙已寱孹丙尘仡並山仫亄从伸乞娙仱巻峇嶲峮儺乪儔嵥乼仜侦书乪寱崫乮嶗倲侉嶔嶢嶵婏崲俟嵓岱侵宬壁偵孩乞巧乶"
    "亚仍孉仢仈娎峽嘁偧亀举巨巫乳亽崯嵇嶘仨倦亙亜巓仡傑巂乏仟丨侤伻仴嶹乲巢巷乊个尖已嵬宺丯们乽佯巇予专之巪崳乬嵬乘丵嘁亹崎嬨嵺伮嵼丣屃且傘嶭丐嶮嶲亣川乘严乲嶐嵡丑巬丞巯嶷仧峩已乽亷乙嵹与仌倯丶互侱上亷仢嫏"
    "企嶝嶾害促岨嵠佽巅寳乱佳兗伔左傒嬊偼峾丰丣乇串嶫崑丠偕峷丁乯仹丱嶬嵱丄嵻宜嶎嵋嶞买巚上嘁侮乗孑亿丯嬀婕嵘嵇嶀差屚峋巠丛上嶮巪巒嫔嵕一丛丢嶡差亅巩巹嵛丢丶乯亲丙俎巢乥巼主嶯丢巬亃丹嵞亇巢已埌巴巋丌嵟丕乮"
    "峭丩嶼中亸亞巌峟事七嵞丼不嵮嘁嶬乳巬乓崶侹仡佟伇任乖侴崚云乒乺丰巭孅丵佁崊专嶰巟嵳伖互峳亞亃亞兓嘁倏串媔乳峑于也侏丈岈嶗义崊室嵯亗剟倎乊嵑已乽巃巅乆丆屎尭亶丕五乳巺乼丼尵伃亍体侙偍伏嚜人佐临佗代倞侭嶱"
    "仵儁嵢崨嶥傐岷傴侷凯亟嵀崩佮唱儀嶮丿岝孇丁巐妗岺倍叽嬥刟嶐从偎壶倾嗫州亡噽崘姺儬崆乏嵻太嗿勗亄岯巚嫛両仅寵义嶶嶱丠丙尋丗乩嶡且习仵嶌嶼崌嶰佚嵣崈乒嵿专媓伳体仫嶶嵖什嵺仂屾嶻争乃伱亯巗佔亵嘁仕丟嵭丷嬎嶎"
    "嶁岥嵍崛巰嵷九伹嵄嶫仉七乷嚣媇仦巛乌伇侨嶓巗倇屿云俣崙孶嫰厰倱偖丌嶸乥倽峢僐佴傏嶌亣巴嗿嵍丮养冣云嶹嚪倓侺东云屷剑巊岬嫓媀倭嫳傩嶫岴乣嵬崵寪俌巑刉亰亵偄低佪乡伷峮媪今嫘份崐伀偅崷嶁做嶨仾俢峭儕匈嵶嶄世"
    "屇岫乒乔崽峝峋佡嶥峥峰峪京局嶀嬰乵仟嶏人乾倜峝岔屖巿峤岨乥丄仚勒岬专嘁偑今岌伯剾佑巈嵌以岵实嬺伒嗿局丐佨主婜嬇峐仒岹嶈偲喽伊丼亢崐傝伿倭峗侗峥丗嬊峖屹产尵巻嵵娬乙亸亦仚仢巁峌崷崾嬌嶒嶸俑嶸坸堎屜佱尾姅"
    "嶻了伮佁仱巳嵞嶹丩嘁丵伍姚嶒嵦倓俴妤嶭嵸们俠巍冉匬亨巗嶯峤亢咽嶑丁巃學专仾將乙乨嵔巕崖俈工侕仮丕价嵊屿亾仡巛嵿尢乧亜娏埜嶽巆俇剋峴嵹巣峵尬嵽宀刱岌嵩俛宬孛峷娇嶒寧坏俀凵崴嵗嵠嘁垒岵嫺俾媨崸屷亖丨人嫻巆"
    "奛仲乙乇佔岠刕媲仱乡媥仼会儚崴寬崀尫岔乩佄巳傞尽寝垺姯崯倞嵰増偃崢崘尗仪亅乏嶜巂凄伐屮倨五嬙嵈俷巫孛丌娿峚崵嵺伨峜临嘁並人乊嶨丶丠么乧嶛崀乫予伽世亐崙亐供巺丑巂嵣巌嶆串巢崤嵓宨嶇尾仍崙伊峼乩巰屎嵳亿嶓"
    "巓亊丢巓宂巳且傝仪嬚巧侁丏嫛亐墠峉巗亅巢屒嶮嘁乺创巾偖乀专嵯世丘嶴嶫嶀仭嶱巻崿与偌州嶷乨嶸乽东丑乏嶫嶨嵢巾岠伐仏伌峒乾嶞尥亏嬓刽崴嵏偕嬲奂嬏夝嵎尯塆估制崟崠岟嚹嘁嵿娴俱左岘嵋俲岽伛婈岵堐崄嵗乒伇尯劳尥"
    "佸嶛嬵之乡厬嶠媞密屯岃仲佖嶟侏屸封塠墬娎刌峪夣偱峆嶎姾倷偠便崞巬喬冷寉嘁亦塥宱冄嵐峷崕婷壆嵓屙倧傮不娵嶙妪乯嵽倎丫似乗嵎島倴佣仒俋佊岽二倌巢俍崆嵩崅岽仙嫥嵤巵嫱丛峚倅宜众寋岏丗丌嵻巐丅嵫偖人丠媔乖伐嘁"
    "並妢峱丷亽崘嶂巁妍仈傺嶵俛嶹巹巔尧巃仗俪丏仚己乫巈傼嵯嵄俆巐峳嶓丆嶞伦巗乍乎专乛巧媱争了伈伵佾屁嶪崴尯巎峛中嬥厁丠峀傇容埝屑墴乯寋媠佬俼嫄岂屾婎嘁崫囥儲偑峹嬾佤宫人媉岎堋巡嵞乐仸孃又尟倪乣奿仂俏吣争嬝"
    "寋孜導伄傃僧伛娸寚埜埡圔勅嶸墄倛嵄候嬊亩僺休左巈厏喭尐峪崪媑嶇倉寐嶶崁嶛妒嶆婦倏俢乍仰嶖媡亣孏垣买佁乥嶫巌巛偫乳习伂嶬两対嵌傜嵍崖嵽峤伞嘁僤丼尿丣巊傏岌乮峋峦巓嵜俀仼嵲嶰云亗並婬勗嶶傌崇屶嶈屚妿仄伔仸"
    "娻佪姖乜巁巏亴主宦京丘嘛亦侣仾乍峖崼嶘二亥乒工嶬嘁嶊傇乺丕巵亴乺垵吐丑巧仗乿亴妠乼巼嬟巍佢嵡乘严屃孳川嵤丹峉巘寻崰儶从嵴巠傂乑俌堅仼丄嵲佤峹巕亱乺丨崎乆峤崟小嶤佛嵪侟崒巘嶚亊仄丷具峽岴亜佊宭丐世仮亀先"
    "岷峇嘁佽仺俁巰峾嶧嶄婎峊刧佶嘁乆咖孑嶕尹寽哵俧峪巨僧嵋働堁丞嵞乀任亖巄亠俦嵺岿克宭二倊嵪俚嫍嗘嵛嬳宋侟伐崜嵲崊媇丽嫽孜亀亿俭伥峊乪侍凜佌巙偋亽岰峹也体屧优倕佛乏堢埦个倶屷喩众尮伬侾嵞佬婝埙嵈巸丧伣伋嵗"
    "嶲久尕僷仭倥巫嵑侙宮嶜嶌崢嫉俄下嘁導嶈償嵽巸冗佯唇俧倦伒巷乫侼嫍崓俰劅嶑両岽临崨仡嬦崯崬嵣余偲侱亖侙仂俟俘僸俢寗伬峕寰儭傌尷亦岌乚岒嬉係嶃対峎尶层嵰仧婵嶿佹佫一崔對丠云俰乼就伄嶃嶚峣偣嵿宊嵇亣嘁嵜井嶞"
    "佁崶嶙偙主崯侹嵪坩丶崊亿屉嵺嘁丞乯孰伐乾巠乵亁屚嶃佨乩尲伡屖峕侬习巊丑嵳也尴峸么寨尚丰圽乏寍崙峋乔侇健亭个亷任侶巾乽乼嶦嶂倨嶖亗"
)
SCALES = (
    0.00039729362, 0.00087709504, 0.00022167334, 0.00074209785, 0.0017134519, 0.00091571611,
    0.00065892102, 0.00062036398, 0.00045687347, 0.00059176178, 0.00055850658, 0.0012227665,
    0.00065579079, 0.00024728512, 0.00088018243, 0.00034209026, 0.00094435352, 0.00031636207,
    0.00021105581, 0.00062316563, 0.0010017747, 0.00041476142, 0.0012298331, 0.0011626637, 0.00079234864,
    0.00047781988, 0.00036067562, 0.00038112071, 0.00079012761, 0.00086592475, 0.00088798051,
    0.0010003562, 0.0024694807, 0.00087741989, 0.0015325891, 0.0020905572, 0.00079549995, 0.00092005712,
    0.00044566818, 0.00052341289, 0.00074577931, 0.00069838157, 0.00085859606, 0.00056211866,
    0.00039044424, 0.00087137945, 0.0006717912, 0.00042310084, 0.00098070328, 0.0012608269,
    0.00087313406, 0.00076801307, 0.0011586832, 0.0018238968, 0.00061451778, 0.0010273688, 0.00038203874,
    0.00040106763, 0.0011331323, 0.00045046397, 0.00056388904, 0.00057966978, 0.00084087253,
    0.00084279734, 0.00053158781, 0.0042723813, 0.00092161453, 0.00046719096, 0.0010145964,
    0.00038519697, 0.00054083613, 0.0020858501, 0.00077283022, 0.0019504353, 0.00039519966, 0.001280228,
    0.0010082112, 0.001238115, 0.0028230026, 0.00085881067, 0.001653264, 0.00093784585, 0.0008473674,
    0.00062538852, 0.0016337227, 0.0011931465, 0.00083122379, 0.0012013842, 0.00057032012, 0.0040213927,
    0.00068179978, 0.0017984497, 0.001312199, 0.0015600231, 0.00073703995, 0.00068741012, 0.00054323062,
    0.0019040824, 0.00094596355, 0.00090105296, 0.0015919233, 0.00091711333, 0.0011610402, 0.00057559699,
    0.00068874413, 0.00078094727, 0.0018813448, 0.00057988969, 0.0023762058, 0.0014302637, 0.00027992789,
    0.00089066545, 0.00092383084, 0.00079811329, 0.0017411776, 0.00094293366, 0.0022937881, 0.002621206,
    0.0037347015, 0.0013859838, 0.0033905092, 0.0018648875, 0.00053809903, 0.0073059094, 0.0010439756,
    0.0031666167, 0.0027220307, 0.001341151, 0.0017078589, 0.0017396373, 0.00080160273, 0.0028266197,
    0.0031418353, 0.0018105413, 0.0010508951, 0.00060619344, 0.0030049642, 0.00072293577, 0.0049053109,
    0.00069088227, 0.0041947174, 0.00080592744, 0.0019569967, 0.0060679731, 0.0014926636, 0.001056686,
    0.0007506251, 0.00039783018, 0.0018398977, 0.0043841186, 0.00083306554, 0.001577867, 0.00091064308,
    0.00091700268, 0.00068286684, 0.00055972923, 0.0025962705, 0.0012807945, 0.00090711983,
    0.00063369866, 0.0013222957, 0.0010291224, 0.0018890661, 0.00076003425, 0.0023532575, 0.0015541628,
    0.0011598467, 0.0013062637, 0.0013537875, 0.0021457246, 0.0015988973, 0.0024707937, 0.0014796405,
    0.00062539248, 0.0019481352, 0.00077229837, 0.0013196372, 0.0013089783, 0.0013511555, 0.00077371899,
    0.0030019786, 0.0024740817, 0.00064989348, 0.0016412523, 0.0018857571, 0.0005998197, 0.0017085753,
    0.0018613192, 0.0017505197, 0.0010210073, 0.00090315001, 0.0012159945, 0.0019292946,
)
BIASES = (
    0.14748929, -0.14495356, -0.25900739, -0.20279869, -0.16736621, 0.2465404, 0.28571916, 0.65804231,
    -0.0334897, 0.18482454, 0.3408995, 0.22935347, -0.20152423, 0.11999633, -0.063540056, 0.076519936,
    -0.20949323, -0.049889497, -0.12550554, -0.14507587, -0.34304971, 0.04567644, 0.1755724, 0.053569403,
    0.44359735, 0.15873778, 0.058617547, -0.033443131, -0.014548787, 0.1468619, -0.11614915, 0.066580422,
    0.065117188, -0.0087580774, -0.057844348, -0.085039496, -0.10872245, -0.1865246, -0.1084363,
    -0.060080297, -0.23692438, -0.22515884, 0.052801449, -0.13419691, 0.033267237, -0.13095948,
    -0.0392102, -0.09452419, -0.31477243, 0.02859129, -0.12059663, 0.19412412, -0.16656078, -0.14173061,
    0.025987085, 0.0045410688, 0.13637066, 0.096277595, 0.31976953, 0.15359582, -0.12568025, 0.13569373,
    -0.13696124, 0.46172515, 0.22573058, 0.0084869191, 0.25550005, 0.021513617, 0.038971346, -0.22531797,
    0.0084489118, 0.15618204, 0.051566496, 0.043312985, 0.15917425, 0.40655535, -0.12721644, 0.21401924,
    0.18531442, -0.49355, 0.076695822, 0.14443801, 0.2600444, 0.19172953, 0.032080304, 0.13796249,
    0.28817189, 0.12174629, 0.10819602, 0.018118978, -0.092696279, 0.27164388, -0.05309793, -0.29325062,
    0.38110444, 0.30834967, -0.0054783188, -0.088884912, -0.015976956, -0.46772248, 0.17817022,
    0.070019946, 0.15486099, -0.19178121, 0.090303384, 0.12820761, -0.11759258, -0.042386424,
    0.024758762, 0.22483021, 0.19702908, -0.025267852, 0.45254931, 0.48849186, 0.31836274, -0.18071678,
    0.052768625, -0.14952403, 0.1339975, 0.11320034, 0.40584981, 0.41472608, 0.19851889, 0.12280561,
    0.27621472, 0.25707608, 0.39990607, 0.10813275, -0.010279937, 0.16024452, -0.05137473, -0.027340246,
    0.25758451, 0.22569086, 0.024038948, 0.15273404, 0.58555871, 0.0794167, 0.031851146, 0.092148006,
    0.093473263, 0.041409127, -0.16875815, 0.15377536, 0.53791064, -0.20690496, 0.42029586, 0.27673325,
    0.51069409, 0.026915943, 0.10167579, -0.37078771, 0.1048383, 0.58929569, 0.42361906, 0.58889562,
    0.14166978, -0.39895421, 0.26099324, 0.30180997, 0.35433879, -0.020336436, -0.18834804, 0.1646979,
    0.43205866, -0.10971279, 0.072195739, 0.22046608, -0.04302432, 0.25926092, 0.16675305, 0.062069759,
    0.20798324, -0.061200779, 0.20043674, 0.17485426, 0.040195633, -0.2148187, 0.35814178, -0.042535566,
    0.059131846, -0.18424034, -0.30099815, -0.042668451, -0.04024462, -0.22458723, -0.46364209,
    0.088155374, -0.009017407, 0.069029398, 0.029343428, -1.9426312, -2.8928256,
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


# ==================== the search bot (shared/games/podracing/search.py)

# ----------------------------------------------------------------------------- rules (engine.py)

CHECKPOINT_SWEEP_RADIUS_SQ = 358801.0
"""A pod passes its next checkpoint when its centre enters the circle of radius 599 from outside."""
COLLISION_DISTANCE_SQ = 640000.0
"""Pods (radius 400) touch at a centre distance of 800."""
BOOST_THRUST = 650
MAX_ROTATION = 18.0
FRICTION = 0.85
SHIELD_MASS = 10.0
SHIELD_COOLDOWN = 3
MIN_IMPULSE = 120.0
PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
"""Collision pairs in the engine's order, which breaks exact ties between impact times."""
DEFAULT_COLLISION_CAP = 64
DEFAULT_TIMEOUT_TURNS = 100

BOOST = -1
"""Command code for BOOST (a thrust command is 0..max_thrust)."""
SHIELD = -2
"""Command code for SHIELD."""
NO_WINNER = -1

# ----------------------------------------------------------------------------- search settings

DEFAULT_TIME_BUDGET_MS = 40.0
HORIZON = 5
POOL_SIZE = 6
TARGET_DISTANCE = 10000.0
"""How far ahead of a pod the target point of an action lies (only its direction matters)."""
TIME_MARGIN = 0.9
"""Stop when the next iteration would end past this fraction of the budget."""
PASS_VALUE = 30000.0
"""Progress of one checkpoint pass, more than any distance to a checkpoint on the map."""
WIN_VALUE = 1.0e9
BLOCKER_GUARD_WEIGHT = 0.5
BLOCKER_CHASE_WEIGHT = 0.2
BLOCKER_FACING_WEIGHT = 3.0
"""Per degree between the blocker's heading and the direction of its victim."""
RUNNER_FACING_WEIGHT = 2.0
"""Per degree between the runner's heading and the direction of its next checkpoint."""
ROLE_HYSTERESIS = 2000.0
"""The blocker takes over as runner only when it is this much further along."""
SHIELD_CHANCE = 0.04
BOOST_CHANCE = 0.03
MEMORY_LIMIT = 64

# ----------------------------------------------------------------------------- the racing model

AIM_RADIUS = 550.0
COAST_TURNS = 6
VELOCITY_COMPENSATION = 3.5
BOOST_MIN_DISTANCE = 4500.0
BOOST_MAX_ERROR = 4.0
ORBIT_DISTANCE = 1800.0
ORBIT_ERROR = 60.0
ORBIT_THRUST = 0.3


# ============================================================================= physics


def round_half_away(value: float) -> float:
    """Nearest integer, halves away from zero, never -0.0 (as the engine rounds positions)."""
    magnitude = math.floor(abs(value) + 0.5)
    return float(magnitude if value >= 0 else -magnitude)


def normalize_angle(angle: float) -> float:
    """Into [0, 360) exactly as the engine does it (fmod, +360, and 360 becomes 0)."""
    result = math.fmod(angle, 360.0)
    if result < 0.0:
        result += 360.0
    if result >= 360.0:
        result = 0.0
    return result


def angle_difference(target: float, current: float) -> float:
    """``target - current`` brought into (-180, 180] by one +-360."""
    diff = target - current
    if diff > 180.0:
        diff -= 360.0
    elif diff <= -180.0:
        diff += 360.0
    return diff


@dataclass(frozen=True)
class Track:
    """What the physics needs besides the pods: the checkpoints and the race's settings."""

    checkpoints: tuple[tuple[float, float], ...]
    total_passes: int
    """Passes to finish, the start on checkpoint 0 counting as the first."""
    max_thrust: int = 100
    boost_per_team: bool = False
    timeout_turns: int = DEFAULT_TIMEOUT_TURNS
    collision_cap: int = DEFAULT_COLLISION_CAP


@dataclass(slots=True)
class Pods:
    """The four pods in engine order (two per player), one list per field, and the timeout counters."""

    x: list[float]
    y: list[float]
    vx: list[float]
    vy: list[float]
    angle: list[float]
    next_checkpoint: list[int]
    passed: list[int]
    cooldown: list[int]
    boost: list[bool]
    shield: list[bool]
    timeouts: list[int]

    def copy(self) -> Pods:
        return Pods(
            self.x[:],
            self.y[:],
            self.vx[:],
            self.vy[:],
            self.angle[:],
            self.next_checkpoint[:],
            self.passed[:],
            self.cooldown[:],
            self.boost[:],
            self.shield[:],
            self.timeouts[:],
        )


def heading_towards(pods: Pods, index: int, target_x: float, target_y: float, first_turn: bool) -> float:
    """The heading a pod ends up with when told to aim at a point (engine `_rotate`)."""
    current = pods.angle[index]
    dx = target_x - pods.x[index]
    dy = target_y - pods.y[index]
    if dx == 0.0 and dy == 0.0:
        return current
    target = normalize_angle(math.degrees(math.atan2(dy, dx)))
    if first_turn:
        return target
    diff = angle_difference(target, current)
    if abs(diff) <= MAX_ROTATION:
        return target
    if diff > 0.0:
        return normalize_angle(current + MAX_ROTATION)
    return normalize_angle(current - MAX_ROTATION)


def step(pods: Pods, track: Track, headings: list[float], commands: list[int]) -> int:
    """Play one turn in place, as `engine.Race.step` does; returns the winning pod or NO_WINNER.

    `headings` are the pods' new angles (from `heading_towards`, or a rotation of at most 18
    degrees); `commands` are thrusts 0..max_thrust, BOOST or SHIELD.
    """
    x, y, vx, vy = pods.x, pods.y, pods.vx, pods.vy
    cooldown, boost, shield = pods.cooldown, pods.boost, pods.shield
    for i in range(4):
        command = commands[i]
        shield[i] = False
        if command == SHIELD:
            shield[i] = True
            cooldown[i] = SHIELD_COOLDOWN
            thrust = 0
        elif cooldown[i] > 0:
            cooldown[i] -= 1
            thrust = 0
        elif command == BOOST:
            if boost[i]:
                boost[i] = False
                if track.boost_per_team:
                    boost[i ^ 1] = False
                thrust = BOOST_THRUST
            else:
                thrust = track.max_thrust
        else:
            thrust = command
        heading = headings[i]
        pods.angle[i] = heading
        rad = math.radians(heading)
        vx[i] += math.cos(rad) * thrust
        vy[i] += math.sin(rad) * thrust
    finishers: list[tuple[float, int]] = []
    elapsed = 0.0
    collisions = 0
    while True:
        best_t = 0.0
        best_i = -1
        best_j = -1
        for i, j in PAIRS:
            px = x[i] - x[j]
            py = y[i] - y[j]
            dvx = vx[i] - vx[j]
            dvy = vy[i] - vy[j]
            a = dvx * dvx + dvy * dvy
            b = 2.0 * (px * dvx + py * dvy)
            c = px * px + py * py - COLLISION_DISTANCE_SQ
            if a == 0.0 or c <= 0.0 or b >= 0.0:
                continue
            disc = b * b - 4.0 * a * c
            if disc < 0.0:
                continue
            t = (-b - math.sqrt(disc)) / (2.0 * a)
            if t > 0.0 and elapsed + t < 1.0 and (best_i < 0 or t < best_t):
                best_t, best_i, best_j = t, i, j
        if best_i < 0 or collisions >= track.collision_cap:
            break
        _advance(pods, track, elapsed, best_t, finishers)
        elapsed += best_t
        _bounce(pods, best_i, best_j)
        collisions += 1
    _advance(pods, track, elapsed, 1.0 - elapsed, finishers)
    for i in range(4):
        vx[i] = float(math.trunc(vx[i] * FRICTION))
        vy[i] = float(math.trunc(vy[i] * FRICTION))
        x[i] = round_half_away(x[i])
        y[i] = round_half_away(y[i])
    timeouts = pods.timeouts
    timeouts[0] -= 1
    timeouts[1] -= 1
    if finishers:
        return min(finishers)[1]
    return NO_WINNER


def _advance(pods: Pods, track: Track, elapsed: float, dt: float, finishers: list[tuple[float, int]]) -> None:
    """Move every pod by v * dt, passing its next checkpoint if it enters it on the way."""
    x, y, vx, vy = pods.x, pods.y, pods.vx, pods.vy
    checkpoints = track.checkpoints
    for i in range(4):
        dx = vx[i] * dt
        dy = vy[i] * dt
        cx, cy = checkpoints[pods.next_checkpoint[i]]
        qx = x[i] - cx
        qy = y[i] - cy
        c = qx * qx + qy * qy - CHECKPOINT_SWEEP_RADIUS_SQ
        a = dx * dx + dy * dy
        if c > 0.0 and a != 0.0:
            b = 2.0 * (qx * dx + qy * dy)
            disc = b * b - 4.0 * a * c
            if disc >= 0.0:
                u = (-b - math.sqrt(disc)) / (2.0 * a)
                if 0.0 <= u <= 1.0:
                    pods.next_checkpoint[i] = (pods.next_checkpoint[i] + 1) % len(checkpoints)
                    pods.passed[i] += 1
                    pods.timeouts[i >> 1] = track.timeout_turns
                    if pods.passed[i] == track.total_passes:
                        finishers.append((elapsed + u * dt, i))
        x[i] += dx
        y[i] += dy


def _bounce(pods: Pods, i: int, j: int) -> None:
    """Elastic bounce, then the same impulse again raised to at least 120 (engine `_bounce`)."""
    x, y, vx, vy = pods.x, pods.y, pods.vx, pods.vy
    m1 = SHIELD_MASS if pods.shield[i] else 1.0
    m2 = SHIELD_MASS if pods.shield[j] else 1.0
    nx = x[i] - x[j]
    ny = y[i] - y[j]
    dvx = vx[i] - vx[j]
    dvy = vy[i] - vy[j]
    denom = (nx * nx + ny * ny) * (1.0 / m1 + 1.0 / m2)
    nd = nx * dvx + ny * dvy
    fx = nx * nd / denom
    fy = ny * nd / denom
    vx[i] -= fx / m1
    vy[i] -= fy / m1
    vx[j] += fx / m2
    vy[j] += fy / m2
    length = math.sqrt(fx * fx + fy * fy)
    if length < MIN_IMPULSE and length != 0.0:
        scale = MIN_IMPULSE / length
        fx *= scale
        fy *= scale
    vx[i] -= fx / m1
    vy[i] -= fy / m1
    vx[j] += fx / m2
    vy[j] += fy / m2


# ============================================================================= racing model


def _thrust_for(error: float, max_thrust: int) -> int:
    """Full thrust up to 60 degrees off the aim, fading to nothing at 120."""
    if error < 60.0:
        return max_thrust
    if error >= 120.0:
        return 0
    return int(max_thrust * (120.0 - error) / 60.0)


def _segment_near(x: float, y: float, dx: float, dy: float, cx: float, cy: float) -> bool:
    """Whether the segment (x, y) + [0, 1] * (dx, dy) comes within AIM_RADIUS of (cx, cy)."""
    length_sq = dx * dx + dy * dy
    u = 0.0 if length_sq == 0.0 else ((cx - x) * dx + (cy - y) * dy) / length_sq
    u = max(0.0, min(1.0, u))
    ex = x + u * dx - cx
    ey = y + u * dy - cy
    return ex * ex + ey * ey < AIM_RADIUS * AIM_RADIUS


def _coasts_into(x: float, y: float, vx: float, vy: float, cx: float, cy: float, turns: int) -> bool:
    """Whether a pod reaches (cx, cy) within `turns` turns without any more thrust."""
    for _ in range(turns):
        if _segment_near(x, y, vx, vy, cx, cy):
            return True
        x += vx
        y += vy
        vx = float(math.trunc(vx * FRICTION))
        vy = float(math.trunc(vy * FRICTION))
    return False


def _aim_error(pods: Pods, index: int, heading: float, aim_x: float, aim_y: float) -> float:
    """Degrees between a heading and the direction from the pod to a point."""
    wanted = math.degrees(math.atan2(aim_y - pods.y[index], aim_x - pods.x[index]))
    return abs(angle_difference(normalize_angle(wanted), heading))


def race_move(pods: Pods, index: int, track: Track, first_turn: bool, anticipate: bool) -> tuple[float, int]:
    """A racing move (heading, command): aim at the next checkpoint corrected for the drift,
    thrust by how well the pod faces it, BOOST on long straight stretches.

    With `anticipate`, a pod that would coast into its checkpoint anyway already turns towards the
    one after (keeping as much thrust as still lets it pass); the search's own seed plan uses it,
    the cheap opponent model does not.
    """
    checkpoints = track.checkpoints
    x, y, vx, vy = pods.x[index], pods.y[index], pods.vx[index], pods.vy[index]
    current = pods.next_checkpoint[index]
    cx, cy = checkpoints[current]
    max_thrust = track.max_thrust
    final = pods.passed[index] >= track.total_passes - 1
    if anticipate and not final and _coasts_into(x, y, vx, vy, cx, cy, COAST_TURNS):
        fx, fy = checkpoints[(current + 1) % len(checkpoints)]
        aim_x = fx - VELOCITY_COMPENSATION * vx
        aim_y = fy - VELOCITY_COMPENSATION * vy
        heading = heading_towards(pods, index, aim_x, aim_y, first_turn)
        thrust = _thrust_for(_aim_error(pods, index, heading, aim_x, aim_y), max_thrust)
        while thrust > 0:
            rad = math.radians(heading)
            nvx = vx + math.cos(rad) * thrust
            nvy = vy + math.sin(rad) * thrust
            after_x = round_half_away(x + nvx)
            after_y = round_half_away(y + nvy)
            if _coasts_into(
                after_x, after_y, math.trunc(nvx * FRICTION), math.trunc(nvy * FRICTION), cx, cy, 5
            ):
                break
            thrust //= 2
        return heading, thrust
    aim_x = cx - VELOCITY_COMPENSATION * vx
    aim_y = cy - VELOCITY_COMPENSATION * vy
    heading = heading_towards(pods, index, aim_x, aim_y, first_turn)
    error = _aim_error(pods, index, heading, aim_x, aim_y)
    command = _thrust_for(error, max_thrust)
    distance = math.hypot(cx - x, cy - y)
    if anticipate and distance < ORBIT_DISTANCE and (vx != 0.0 or vy != 0.0):
        drift = math.degrees(math.atan2(vy, vx) - math.atan2(cy - y, cx - x))
        if abs((drift + 540.0) % 360.0 - 180.0) > ORBIT_ERROR:
            command = min(command, int(max_thrust * ORBIT_THRUST))
    aligned = error <= BOOST_MAX_ERROR and distance > BOOST_MIN_DISTANCE
    if aligned and pods.boost[index] and pods.cooldown[index] == 0:
        command = BOOST
    return heading, command


def guard_point(pods: Pods, track: Track, blocker: int, victim: int) -> tuple[float, float]:
    """Where the blocker should wait: the victim's next checkpoint if the blocker gets there first,
    otherwise the checkpoint after it."""
    checkpoints = track.checkpoints
    current = pods.next_checkpoint[victim]
    cx, cy = checkpoints[current]
    mine = math.hypot(cx - pods.x[blocker], cy - pods.y[blocker])
    theirs = math.hypot(cx - pods.x[victim], cy - pods.y[victim])
    if mine < theirs:
        return cx, cy
    return checkpoints[(current + 1) % len(checkpoints)]


def block_move(pods: Pods, index: int, victim: int, track: Track, first_turn: bool) -> tuple[float, int]:
    """A blocking move: head for the guard point, slow down near it, then turn to face the victim."""
    gx, gy = guard_point(pods, track, index, victim)
    x, y = pods.x[index], pods.y[index]
    distance = math.hypot(gx - x, gy - y)
    if distance < 1500.0:
        aim_x, aim_y = pods.x[victim] + pods.vx[victim], pods.y[victim] + pods.vy[victim]
    else:
        aim_x = gx - VELOCITY_COMPENSATION * pods.vx[index]
        aim_y = gy - VELOCITY_COMPENSATION * pods.vy[index]
    heading = heading_towards(pods, index, aim_x, aim_y, first_turn)
    thrust = _thrust_for(_aim_error(pods, index, heading, aim_x, aim_y), track.max_thrust)
    if distance < 1500.0:
        thrust = min(thrust, int(track.max_thrust * distance / 1500.0))
    return heading, thrust


def progress(pods: Pods, track: Track, index: int) -> float:
    """How far along the race a pod is: passes, then closeness to its next checkpoint."""
    cx, cy = track.checkpoints[pods.next_checkpoint[index]]
    return pods.passed[index] * PASS_VALUE - math.hypot(cx - pods.x[index], cy - pods.y[index])


# ============================================================================= observation


def track_from(observation: dict[str, Any]) -> Track:
    checkpoints = tuple((float(x), float(y)) for x, y in observation["checkpoints"])
    return Track(
        checkpoints=checkpoints,
        total_passes=int(observation["checkpoint_count"]) * int(observation["laps"]) + 1,
        max_thrust=int(observation["max_thrust"]),
    )


def pods_from(observation: dict[str, Any]) -> Pods:
    """The four pods in engine order (player 0's first) from a player's observation."""
    own, theirs = observation["pods"], observation["opponents"]
    ordered = [*own, *theirs] if int(observation["player"]) == 0 else [*theirs, *own]
    timeouts = [int(observation["timeout_left"]), int(observation["opponent_timeout_left"])]
    if int(observation["player"]) == 1:
        timeouts.reverse()
    return Pods(
        x=[float(p["x"]) for p in ordered],
        y=[float(p["y"]) for p in ordered],
        vx=[float(p["vx"]) for p in ordered],
        vy=[float(p["vy"]) for p in ordered],
        angle=[float(max(0, int(p["angle"]))) for p in ordered],
        next_checkpoint=[int(p["next_checkpoint"]) for p in ordered],
        passed=[int(p["checkpoints_passed"]) for p in ordered],
        cooldown=[int(p["shield_cooldown"]) for p in ordered],
        boost=[bool(p["boost_available"]) for p in ordered],
        shield=[False] * 4,
        timeouts=timeouts,
    )


# ============================================================================= search

Move = tuple[float, int]
"""One pod's move in a plan: a rotation in degrees within [-18, 18] and a command (0..max_thrust,
BOOST or SHIELD)."""
Prior = Callable[[Pods, Track, int, bool], tuple[Move, Move]]
"""Proposes the moves of a player's two pods (engine order) in a simulated state: (pods, track,
player, first turn) -> moves. It reads the state and never changes it."""


@dataclass(slots=True)
class Plan:
    """HORIZON turns of moves for the two own pods: rotations[2 * turn + k] and commands likewise."""

    rotations: list[float]
    commands: list[int]
    score: float = -math.inf

    def copy(self) -> Plan:
        return Plan(self.rotations[:], self.commands[:], self.score)

    def shifted(self, filler: Plan) -> Plan:
        """One turn later: drop the first turn, repeat `filler`'s last turn at the end."""
        return Plan(self.rotations[2:] + filler.rotations[-2:], self.commands[2:] + filler.commands[-2:])


@dataclass
class Memory:
    """What a bot keeps between the turns of one race."""

    plan: Plan | None = None
    runner: int = -1


_MEMORY: dict[tuple[int, int, tuple[tuple[float, float], ...]], Memory] = {}
"""Per bot instance, seat and track: the last best plan and the runner, reset on turn 0."""
_INSTANCES = [0]
_DEFAULT_BOT: dict[str, SearchBot] = {}


class _Turn:
    """One decision: the root state, the roles, and the scoring of plans."""

    def __init__(self, observation: dict[str, Any], memory: Memory) -> None:
        self.track = track_from(observation)
        self.first_turn = int(observation["turn"]) == 0 or int(observation["pods"][0]["angle"]) < 0
        self.player = int(observation["player"])
        self.own = (2 * self.player, 2 * self.player + 1)
        self.opponents = (2 - 2 * self.player, 3 - 2 * self.player)
        root = pods_from(observation)
        if self.first_turn:
            # Rotation is free on the first turn: plans turn relative to facing the next checkpoint.
            for i in range(4):
                cx, cy = self.track.checkpoints[root.next_checkpoint[i]]
                root.angle[i] = normalize_angle(math.degrees(math.atan2(cy - root.y[i], cx - root.x[i])))
        self.root = root
        self.runner, self.blocker = self._roles(memory.runner)
        memory.runner = self.runner
        first, second = self.opponents
        ahead = progress(root, self.track, first) >= progress(root, self.track, second)
        self.victim = first if ahead else second
        # The opponents' first move depends only on what they see now: predict it once, carefully.
        self.opponent_first = [race_move(root, i, self.track, self.first_turn, True) for i in self.opponents]

    def _roles(self, previous_runner: int) -> tuple[int, int]:
        a, b = self.own
        runner = a if progress(self.root, self.track, a) >= progress(self.root, self.track, b) else b
        if previous_runner in self.own and previous_runner != runner:
            other = previous_runner
            lead = progress(self.root, self.track, runner) - progress(self.root, self.track, other)
            if lead < ROLE_HYSTERESIS:
                runner = other
        return runner, (b if runner == a else a)

    # ------------------------------------------------------------------ plans

    def heuristic_plan(self, blocking: bool) -> Plan:
        """Both pods racing (or the blocker blocking), played out in the model to get the rotations."""
        pods = self.root.copy()
        rotations: list[float] = []
        commands: list[int] = []
        headings = [0.0] * 4
        orders = [0] * 4
        for turn in range(HORIZON):
            first = self.first_turn and turn == 0
            for i in self.own:
                if blocking and i == self.blocker:
                    heading, command = block_move(pods, i, self.victim, self.track, first)
                else:
                    heading, command = race_move(pods, i, self.track, first, True)
                rotation = max(-MAX_ROTATION, min(MAX_ROTATION, angle_difference(heading, pods.angle[i])))
                rotations.append(rotation)
                commands.append(command)
                headings[i] = normalize_angle(pods.angle[i] + rotation)
                orders[i] = command
            self._opponent_moves(pods, turn, headings, orders)
            step(pods, self.track, headings, orders)
        return Plan(rotations, commands)

    def prior_plan(self, prior: Prior) -> Plan:
        """The prior's moves played out in the model against the opponent model (as `score` plays
        a plan), so that the search can start from where the prior would go."""
        pods = self.root.copy()
        rotations: list[float] = []
        commands: list[int] = []
        headings = [0.0] * 4
        orders = [0] * 4
        max_thrust = self.track.max_thrust
        for turn in range(HORIZON):
            moves = prior(pods, self.track, self.player, self.first_turn and turn == 0)
            for i, (rotation, command) in zip(self.own, moves, strict=True):
                rotation = max(-MAX_ROTATION, min(MAX_ROTATION, float(rotation)))
                if command not in (SHIELD, BOOST):
                    command = max(0, min(max_thrust, int(command)))
                rotations.append(rotation)
                commands.append(command)
                headings[i] = normalize_angle(pods.angle[i] + rotation)
                orders[i] = command
            self._opponent_moves(pods, turn, headings, orders)
            step(pods, self.track, headings, orders)
        return Plan(rotations, commands)

    def _opponent_moves(self, pods: Pods, turn: int, headings: list[float], orders: list[int]) -> None:
        for k, i in enumerate(self.opponents):
            if turn == 0:
                headings[i], orders[i] = self.opponent_first[k]
            else:
                headings[i], orders[i] = race_move(pods, i, self.track, False, False)

    def score(self, plan: Plan) -> float:
        """Play the plan out against the opponent model and score where it leads."""
        pods = self.root.copy()
        track = self.track
        headings = [0.0] * 4
        orders = [0] * 4
        own_a, own_b = self.own
        rotations, commands = plan.rotations, plan.commands
        for turn in range(HORIZON):
            for k, i in ((0, own_a), (1, own_b)):
                heading = pods.angle[i] + rotations[2 * turn + k]
                if heading < 0.0:
                    heading += 360.0
                elif heading >= 360.0:
                    heading -= 360.0
                headings[i] = heading
                orders[i] = commands[2 * turn + k]
            self._opponent_moves(pods, turn, headings, orders)
            winner = step(pods, track, headings, orders)
            if winner != NO_WINNER:
                value = WIN_VALUE - turn * PASS_VALUE
                return value if winner >> 1 == self.player else -value
            if pods.timeouts[self.player] <= 0:
                return -WIN_VALUE
            if pods.timeouts[1 - self.player] <= 0:
                return WIN_VALUE
        return self.evaluate(pods)

    def evaluate(self, pods: Pods) -> float:
        track = self.track
        runner, blocker, victim = self.runner, self.blocker, self.victim
        first, second = self.opponents
        theirs = max(progress(pods, track, first), progress(pods, track, second))
        value = progress(pods, track, runner) - theirs
        cx, cy = track.checkpoints[pods.next_checkpoint[runner]]
        value -= RUNNER_FACING_WEIGHT * _aim_error(pods, runner, pods.angle[runner], cx, cy)
        gx, gy = guard_point(pods, track, blocker, victim)
        bx, by = pods.x[blocker], pods.y[blocker]
        value -= BLOCKER_GUARD_WEIGHT * math.hypot(gx - bx, gy - by)
        vx, vy = pods.x[victim], pods.y[victim]
        value -= BLOCKER_CHASE_WEIGHT * math.hypot(vx - bx, vy - by)
        value -= BLOCKER_FACING_WEIGHT * _aim_error(pods, blocker, pods.angle[blocker], vx, vy)
        return value

    # ----------------------------------------------------------------- output

    def action(self, plan: Plan) -> dict[str, Any]:
        moves = []
        for k, i in enumerate(self.own):
            heading = normalize_angle(self.root.angle[i] + plan.rotations[k])
            rad = math.radians(heading)
            command = plan.commands[k]
            thrust: int | str = "SHIELD" if command == SHIELD else "BOOST" if command == BOOST else command
            moves.append(
                {
                    "x": round(self.root.x[i] + math.cos(rad) * TARGET_DISTANCE),
                    "y": round(self.root.y[i] + math.sin(rad) * TARGET_DISTANCE),
                    "thrust": thrust,
                }
            )
        return {"pods": moves}


class SearchBot:
    """A `decide(observation) -> action` callable with its own time budget and random generator,
    and optionally a prior whose plan seeds every turn's search."""

    def __init__(
        self,
        time_budget_ms: float = DEFAULT_TIME_BUDGET_MS,
        seed: int | None = None,
        max_iterations: int | None = None,
        prior: Prior | None = None,
    ) -> None:
        if time_budget_ms <= 0:
            raise ValueError(f"time_budget_ms must be positive, not {time_budget_ms}")
        if max_iterations is not None and max_iterations < 0:
            raise ValueError(f"max_iterations must not be negative, not {max_iterations}")
        self.time_budget_ms = time_budget_ms
        self.max_iterations = max_iterations
        self.random = random.Random(seed)
        _INSTANCES[0] += 1
        self.instance = _INSTANCES[0]
        self.prior = prior
        self.iterations = 0
        """Plans scored in the last call (for measurements)."""
        self.plan: Plan | None = None
        """The plan played in the last call, with its score (for measurements)."""
        self.prior_plan: Plan | None = None
        """The prior's plan in the last call as seeded, with its score (None without a prior)."""

    def __call__(self, observation: dict[str, Any]) -> dict[str, Any]:
        start = time.perf_counter()
        deadline = start + self.time_budget_ms * TIME_MARGIN / 1000.0
        key = (
            self.instance,
            int(observation["player"]),
            tuple((float(x), float(y)) for x, y in observation["checkpoints"]),
        )
        if int(observation["turn"]) == 0 or key not in _MEMORY:
            _MEMORY.pop(key, None)
            while len(_MEMORY) >= MEMORY_LIMIT:
                del _MEMORY[next(iter(_MEMORY))]
            _MEMORY[key] = Memory()
        memory = _MEMORY[key]
        turn = _Turn(observation, memory)
        best = self._search(turn, memory, deadline)
        memory.plan = self.plan = best
        return turn.action(best)

    def _search(self, turn: _Turn, memory: Memory, deadline: float) -> Plan:
        racing = turn.heuristic_plan(blocking=False)
        seeds = [racing, turn.heuristic_plan(blocking=True)]
        if memory.plan is not None:
            seeds.append(memory.plan.shifted(racing))
        self.prior_plan = None
        if self.prior is not None:
            self.prior_plan = turn.prior_plan(self.prior)
            seeds.append(self.prior_plan)
        pool: list[Plan] = []
        for plan in seeds:
            self._clamp_boosts(turn, plan)
            plan.score = turn.score(plan)
            pool.append(plan)
        pool.sort(key=lambda p: p.score, reverse=True)
        iterations = 0
        started = time.perf_counter()
        while True:
            share = self._share_spent(iterations, started, deadline)
            if share >= 1.0:
                break
            child = self._mutate(turn, pool[self.random.randrange(min(len(pool), 3))], share)
            child.score = turn.score(child)
            iterations += 1
            if len(pool) < POOL_SIZE:
                pool.append(child)
            elif child.score > pool[-1].score:
                pool[-1] = child
            else:
                continue
            pool.sort(key=lambda p: p.score, reverse=True)
        self.iterations = iterations
        return pool[0]

    def _share_spent(self, iterations: int, started: float, deadline: float) -> float:
        """How much of the turn's search is done, 1.0 once the next iteration would overrun it.

        With an iteration cap the clock is not read, so that a seeded search is reproducible.
        """
        if self.max_iterations is not None:
            return iterations / self.max_iterations if self.max_iterations else 1.0
        now = time.perf_counter()
        per_iteration = (now - started) / iterations if iterations else 0.0
        if now + per_iteration >= deadline:
            return 1.0
        return (now - started) / (deadline - started)

    def _mutate(self, turn: _Turn, parent: Plan, share: float) -> Plan:
        """Change one or two moves; the changes get smaller as the turn's search goes on."""
        rng = self.random
        child = parent.copy()
        amplitude = max(0.1, 1.0 - share)
        max_thrust = turn.track.max_thrust
        for _ in range(1 + (rng.random() < 0.3)):
            gene = rng.randrange(2 * HORIZON)
            roll = rng.random()
            if roll < SHIELD_CHANCE:
                child.commands[gene] = SHIELD
            elif roll < SHIELD_CHANCE + BOOST_CHANCE:
                child.commands[gene] = BOOST
            elif roll < 0.55:
                rotation = child.rotations[gene] + rng.uniform(-2.0, 2.0) * MAX_ROTATION * amplitude
                child.rotations[gene] = max(-MAX_ROTATION, min(MAX_ROTATION, rotation))
            else:
                command = child.commands[gene]
                if command < 0:
                    command = max_thrust
                thrust = command + rng.uniform(-1.0, 1.0) * max_thrust * amplitude
                child.commands[gene] = int(max(0.0, min(float(max_thrust), thrust)))
        self._clamp_boosts(turn, child)
        return child

    @staticmethod
    def _clamp_boosts(turn: _Turn, plan: Plan) -> None:
        """At most one BOOST per pod in a plan, and none once the pod has used it."""
        for k, i in enumerate(turn.own):
            available = turn.root.boost[i]
            for index in range(k, len(plan.commands), 2):
                if plan.commands[index] == BOOST:
                    if available:
                        available = False
                    else:
                        plan.commands[index] = turn.track.max_thrust


def make_search_bot(
    time_budget_ms: float = DEFAULT_TIME_BUDGET_MS,
    seed: int | None = None,
    max_iterations: int | None = None,
    prior: Prior | None = None,
) -> SearchBot:
    """A search bot that spends about `time_budget_ms` per decision; with `max_iterations` it scores
    exactly that many mutated plans instead, ignoring the clock (deterministic with a `seed`); with
    a `prior`, the prior's plan seeds every turn's search."""
    return SearchBot(time_budget_ms, seed, max_iterations, prior)


# ==================== the hybrid (services/trainer/hybrid_template.py)

TIME_BUDGET_MS = 40.0
"""The search's time per turn in milliseconds, the policy's plan included (`arena export --hybrid
--budget-ms` writes it)."""

_HYBRID: dict[str, HybridBot] = {}


def policy_view(pods: Pods, track: Track, player: int, first_turn: bool) -> dict[str, Any]:
    """A simulated state as the observation the policy's features read (own pods first); the
    search's positions and speeds are whole numbers already, angles are rounded as the referee
    shows them."""
    count = len(track.checkpoints)
    order = (2 * player, 2 * player + 1, 2 - 2 * player, 3 - 2 * player)
    seen = [
        {
            "x": pods.x[i],
            "y": pods.y[i],
            "vx": pods.vx[i],
            "vy": pods.vy[i],
            "angle": round_half_away(pods.angle[i]) % 360.0,
            "next_checkpoint": pods.next_checkpoint[i],
            "checkpoints_passed": pods.passed[i],
            "shield_cooldown": pods.cooldown[i],
            "boost_available": pods.boost[i],
        }
        for i in order
    ]
    return {
        "turn": 0 if first_turn else 1,
        "player": player,
        "laps": (track.total_passes - 1) // count,
        "checkpoint_count": count,
        "checkpoints": track.checkpoints,
        "max_thrust": track.max_thrust,
        "pods": seen[:2],
        "opponents": seen[2:],
    }


def _move(action: tuple[float, float, int], max_thrust: int) -> Move:
    """A policy action (rotation, thrust share, kind) as the search's move."""
    rotation, share, kind = action
    if kind == KIND_SHIELD:
        return rotation, SHIELD
    if kind == KIND_BOOST:
        return rotation, BOOST
    return rotation, math.floor(share * max_thrust + 0.5)


class PolicyPrior:
    """The policy's most likely moves, as the search's prior.

    The policy's roles (which pod of each side is the runner, an input) follow the real turns as
    its own `decide` keeps them, per player; a simulated state takes its roles from the real
    turn's, so the prior's first move is exactly the policy's move for the observation.
    """

    def __init__(self) -> None:
        self.runners: dict[int, list[int]] = {}

    def observe(self, observation: dict[str, Any]) -> None:
        """Take this turn's roles (call it with each real observation, before the search)."""
        player = int(observation["player"])
        self.runners[player] = policy_inputs(observation, self.runners.get(player))[2]

    def __call__(self, pods: Pods, track: Track, player: int, first_turn: bool) -> tuple[Move, Move]:
        view = policy_view(pods, track, player, first_turn)
        inputs = policy_inputs(view, self.runners.get(player))[0]
        first, second = (_move(most_likely(pod), track.max_thrust) for pod in inputs)
        return first, second


class HybridBot:
    """A `decide(observation) -> action` callable: the search seeded with the policy's plan."""

    def __init__(
        self,
        time_budget_ms: float = TIME_BUDGET_MS,
        seed: int | None = None,
        max_iterations: int | None = None,
    ) -> None:
        self.prior = PolicyPrior()
        self.search = SearchBot(time_budget_ms, seed, max_iterations, self.prior)

    def __call__(self, observation: dict[str, Any]) -> dict[str, Any]:
        self.prior.observe(observation)
        return self.search(observation)


def decide(observation: dict[str, Any]) -> dict[str, Any]:
    """The hybrid bot with TIME_BUDGET_MS per turn (one instance serves both seats)."""
    bot = _HYBRID.get("bot")
    if bot is None:
        bot = _HYBRID["bot"] = HybridBot()
    return bot(observation)
