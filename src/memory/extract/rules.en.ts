/**
 * English rule tables. Patterns run on the NFKC-normalised, lower-cased message. Weights were set
 * by reading the train split of MASSIVE (calendar, list and alarm commands plus non-task
 * commands) and are measured on its dev split (bench/memory-extract.bench.mjs); no sentence of
 * the data is stored here. See rule-types.ts for what each signal means.
 */
import type { LanguageRules, SignalRule } from './rule-types.js';

const r = (name: string, pattern: RegExp, adds: SignalRule['adds']): SignalRule => ({ name, pattern, adds });

const WEEKDAY = '(?:mon|tues|wednes|thurs|fri|satur|sun)days?';

/** Evidence, summed per signal; see classify.ts for how the sums become an intent. */
export const EN_SIGNALS: readonly SignalRule[] = [
  // Task domain: things that live on a calendar, an alarm clock or a list.
  r('reminder', /\bremind(?:s|ed|ing|ers?)?\b|\bremainders?\b|\bremider\b|\btimers?\b|\bcountdown\b/, { task: 4 }),
  r('remind-me', /\bremind(?!ers?\b)|\b(?:remember|prompt|ping|nudge|warn) (?:me|us)\b|\btell (?:me|us) (?:\w+ ){0,3}to\b|\bwarning\b/, { task: 3, create: 3.5 }),
  r('alarm', /\balarms?\b|\bwake[- ]?up calls?\b/, { task: 4 }),
  r('wake', /\bwake (?:me|us|him|her)\b|\bwake up at\b|\bget (?:me )?up at\b|\bto get up\b/, { task: 4, create: 2.5 }),
  r('calendar', /\bcalendars?\b|\bagenda\b|\bplanner\b|\bdiary\b/, { task: 4 }),
  r('schedule', /\bschedul\w*|\bre-?schedul\w*/, { task: 3.5 }),
  r('appointment', /\bappoint\w*|\bappt\b/, { task: 3.5, query: 0.5 }),
  r('meeting', /\bmeet(?:ing|ings|s)?\b|\bstand-?ups?\b|\bconference\b|\binterview\b|\bsession\b/, { task: 3, create: 1 }),
  r('event', /\bevents?\b/, { task: 3 }),
  r('occasion', /\bbirthdays?\b|\banniversar\w*|\bpart(?:y|ies)\b|\bwedding\b|\bdeadline\b|\bholidays?\b|\bvacation\b|\bdate night\b|\bfuneral\b|\bgraduation\b/, { task: 2, create: 1.5 }),
  r('todo', /\bto-? ?do\b|\btodos?\b|\btasks?\b|\bchores?\b|\berrands?\b/, { task: 4 }),
  r('list', /\blists?\b|\blisted\b/, { task: 3.5, query: 0.5 }),
  r('shopping', /\bgrocer\w*|\bshopping\b|\bwish ?list\b/, { task: 1 }),
  r('plans', /\bplans?\b|\bplanned\b|\bbusy\b|\bfree time\b|\bam i free\b|\bavailab\w*|\bbooked\b|\boccupied\b/, { task: 2, query: 0.5 }),
  r('obligation', /\b(?:i (?:need|have|got|must|should|ought) to|i'?ve got to|i gotta|need to|have to|don'?t forget to|remember to|make sure to)\s+(?!know|see|find out|check|hear|learn|look|understand|get (?:to|a|directions))\w+/, { task: 2, create: 2 }),
  r('priority-words', /\b(?:urgent\w*|asap|(?:high|low|top) priority|important)\b/, { task: 2, create: 2 }),
  r('deadline', /\b(?:by|before|due|no later than)\s+(?:the\s+)?(?:tomorrow|tonight|today|noon|midnight|(?:next |this )?(?:mon|tues|wednes|thurs|fri|satur|sun)day|end of|eod|cob|weekend|\d)/, { task: 4, create: 2 }),
  r('appointment-kinds', /\b(?:dentist|doctor'?s?|vet|haircut|hair cut|lunch|brunch|dinner|class|classes|practice|gym|yoga|church|workout|engagements?|programs?|payday|bills?|due|pending)\b|\b(?:lunch|dinner|movie|coffee|play) date\b|\bdate with\b/, { task: 1 }),
  r('personal-time', /\b(?:i|my|me|we|our)\b.*\b(?:today|tonight|tomorrow|weekend|this week|next week|this month|(?:mon|tues|wednes|thurs|fri|satur|sun)day|morning|afternoon|evening)\b|\b(?:today|tonight|tomorrow|weekend|this week|next week|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b.*\b(?:i|my|me|we)\b/, { task: 1 }),
  r('whats-left', /\bwhat(?:'s| is)? (?:still )?(?:left|remaining)\b|\bwhat else\b|^(?:(?:is|are) there )?anything (?:else|left)\b(?! (?:happens|comes|changes))|\b(?:left|remaining) (?:to do|for (?:me|us|today))\b/, { task: 3, query: 2 }),
  r('my-day', /\bwhat do i have\b|\bdo i have (?:any ?thing|something|plans)\b|\bgoing on\b|\bwhat'?s (?:on|up|happening|next)\b|\bam i (?:busy|free|off|available|working|supposed)\b|\bsupposed to\b|\bneed to (?:remember|do|get done)\b|\bdid i forget\b|\bmy day\b|\bfor me today\b|\b(?:anything|what(?:'s| is)) (?:\w+ )?happening\b(?! in )|\banything (?:important|interesting|planned|scheduled|on)\b|\b(?:is|am|are) (?:\w+ )?(?:free|busy|available)\b|\b(?:do|did|will|have) (?:i|we) (?:have|got|need to|work)\b|\bwhen do (?:i|we)\b/, { task: 2.5 }),
  r('when-question', /^(?:\w+ )?(?:when(?:'s| is| are| was| will| does| do| did)?|what time (?:is|are|does|do|did|will|am)|what day (?:is|does|are|will)|at what time|what date is)\b/, { task: 2 }),
  r('happenings', /\b(?:concerts?|festivals?|games?|match|show|dance|fair|exhibition|recital|performance|performing|parade|ceremony|leap year|full moon|halloween|christmas|thanksgiving|easter|mother'?s day|father'?s day|memorial day|new year)\b/, { task: 1 }),
  r('forget', /\bdon'?t (?:let me )?forget\b|\bremember (?:to|that|i)\b|\bnote (?:down|that|this)\b|\bmake (?:a|an) (?:note|entry)\b|\bjot down\b/, { task: 3, create: 2.5 }),
  r('notify', /\bnotif\w*|\balert (?:me|us)\b|\balerts?\b|\bnotice\b|\bheads up\b/, { task: 2.5, create: 1.5 }),
  r('let-me-know-when', /\b(?:let me know|tell me|inform me) when\b(?!'s)/, { task: 1.5, create: 3 }),
  r('item', /\bitems?\b|\bentr(?:y|ies)\b/, { task: 1.5, create: 0.5 }),

  // Not a task: media, home devices, weather, news, mail, facts, shopping for things, travel.
  r('play', /\b(?:play|plays|playing|replay|resume|shuffle|skip|rewind|pause|unpause)\b/, { other: 3.5 }),
  r('school-play', /\b(?:the|school|a|that) play\b(?! (?:some|me|the|a|my|music))/, { other: -2, task: 1 }),
  r('media', /\b(?:music|songs?|album|artists?|playlists?|tracks?|radio|station|podcasts?|audio ?books?|episode|spotify|pandora|itunes|youtube|netflix|tunes|band|singer|lyrics|genre|rock|jazz|pop)\b/, { other: 3.5 }),
  r('volume', /\b(?:volume|louder|quieter|mute|unmute|silent|silence|speak up|be quiet|shut up|too loud)\b/, { other: 3.5 }),
  r('weather', /\b(?:weather|rain\w*|snow\w*|sunny|cloudy|forecast|temperatures?|degrees|humid\w*|windy|storm\w*|umbrella|jacket|coat|sweater|u\. ?v\.|sunscreen|fog\w*|hot|cold|warm|chilly|freezing)\b/, { other: 3 }),
  r('news', /\b(?:news|headlines?|trump|brexit|election|politic\w*|breaking)\b/, { other: 3.5 }),
  r('mail', /\b(?:e-?mails?|gmail|inbox|mails?|outlook|yahoo)\b|\bcontact (?:details|info|number)\b|\bphone numbers?\b|\bcell number\b|\baddress book\b/, { other: 3.5 }),
  r('reply', /\b(?:reply|replies|respond)\b|\bsend (?:an?|the)? ?(?:text|message|sms)\b|\btext (?:him|her|my|to)\b/, { other: 2.5 }),
  r('home', /\b(?:lights?|lamps?|bulbs?|brightness|brighter|dimmer|dim|hue|plugs?|sockets?|outlet|vacuum\w*|roomba|robot|coffee|kettle|tv|t\. ?v\.|television|thermostat|heater|fan|geyser|colou?rs?)\b/, { other: 3.5 }),
  r('cooking', /\b(?:recipes?|cook\w*|bake|baking|ingredients?|boil|fry|grill|oven|substitute for)\b|\bhow (?:do|can|to|would) (?:i |you )?make\b/, { other: 3.5 }),
  r('money', /\b(?:stocks?|shares?|share price|exchange rate|currenc\w*|dollars?|euros?|pounds?|yen|rupees?|pesos?|bitcoin|nasdaq|dow jones|price of)\b/, { other: 3.5 }),
  r('definition', /\b(?:define|definition|meaning|mean|spell\w*|synonyms?|antonyms?|pronounce|translate)\b/, { other: 3.5 }),
  r('joke', /\b(?:jokes?|funny|laugh|cheer me up|riddle)\b/, { other: 3.5 }),
  r('travel', /\b(?:taxi|uber|lyft|cab|ride|trains?|bus|buses|flights?|tickets?|traffic|commute|directions|route|map|maps|navigate|drive to|subway|metro|airport|eta)\b/, { other: 3.5 }),
  r('social', /\b(?:tweet\w*|twitter|facebook|instagram|linkedin|whatsapp|social media|complain\w*|customer service|status update|post (?:on|to|a))\b/, { other: 3.5 }),
  r('food-order', /\b(?:order (?:a|an|some|me|food|pizza|from|takeaway|take ?out)|takeaway|take ?out|take-out|delivery|deliver|restaurants?|pizza|menu)\b/, { other: 3 }),
  r('films', /\b(?:movies?|films?|cinema|theaters?|theatres?|show ?times?)\b/, { other: 2 }),
  r('clock', /\bwhat(?:'s| is) the (?:current )?time\b(?! (?:for|of)\b)|\bwhat time is it\b|\btime is it\b|\bcurrent (?:time|date)\b|\btime (?:now )?in [a-z]+(?: [a-z]+)?$|\bwhat(?:'s| is) (?:the |today'?s |tomorrow'?s |tomorrows )?date\b|\bwhat date is it\b|(?:^|\bthe |\bwhat )date (?:it is|today|in [a-z]+)\b|\btoday'?s date\b|\bwhat day is (?:it|today)\b|\btime ?zones?\b|\bhour is it\b|\bwhat day of the week (?:is (?:it|today)|does)\b|\bon what date\b/, { other: 4 }),
  r('games', /\b(?:game of|games?|chess|trivia|quiz)\b/, { other: 1.5 }),
  r('search-things', /\b(?:how (?:big|tall|old|far|much|many (?:miles|people|calories|inches|days in))|who (?:is|was|invented|wrote)|where (?:is|was) (?!my|the (?:meeting|event|party|venue))|tallest|biggest|largest|population|born|capital of)\b/, { other: 2.5 }),
  r('places-events', /\b(?:events?|concerts?|festivals?|things to do|happening|going on|shows?|fairs?)\b.*\b(?:in|near|around|nearby) (?!my\b|the calendar\b|the (?:morning|afternoon|evening)\b|(?:the )?next\b)[a-z]+/, { other: 3, task: -1 }),
  r('local', /\b(?:local|locally|around (?:my|here|me)|in (?:the|our|my|this) (?:city|area|town|place|neighbou?rhood|location)|in town|nearby|near me|around here)\b/, { other: 2.5, task: -1 }),
  r('recommend', /\b(?:recommend\w*|suggest\w*|nearby|near me|closest|nearest|best place|where can i)\b/, { other: 2 }),
  r('world-questions', /^(?:\w+ )?should i\b|\bwhat happened\b|\bwhat(?:'s| is) new\b|\bgoing to be nice\b|\bnice (?:out|day)\b|\bhow many days (?:is it )?(?:until|till|to)\b|^(?:(?:hey|olly|alexa) )*what'?s up\??$/, { other: 2.5 }),
  r('polite-delete', /^(?:can|could|would|will) you (?:please )?(?:\w+ )?(?:delete|remove|cancel|clear|erase|empty|take)\b|\bis there a way to (?:delete|remove|cancel|clear|erase)\b/, { delete: 2 }),
  r('polite-create', /^(?:can|could|would|will) you (?:please )?(?:set|add|create|make|schedule|put|remind|book|wake|invite|mark|save)\b/, { create: 2 }),
  r('before-event', /\b(?:let me know|tell me|inform me|notify me|alert me|warn me)\b.*\b(?:before|after|in advance|ahead|prior)\b/, { create: 3, task: 2 }),
  r('onto-list', /\b(?:get|put|place|include|contain|added|enter|write)\b.*\b(?:on|to|in|into) (?:the|my|this|that|a) (?:\w+ )?list\b/, { create: 2 }),
  r('greeting', /^(?:hi|hello|hey|good (?:morning|evening|night)|how are you|thanks?|thank you)\b/, { other: 0.5 }),

  // Actions.
  r('create-verb', /\b(?:set|sets|setup|create|crate|make|makes|book|plan|arrange|organi[sz]e|enter|insert|save|mark|note|write|include|invite|fix|place|log|generate)\b/, { create: 2 }),
  r('add-verb', /\b(?:add|adds|added|put|append)\b/, { create: 2.5, task: 1 }),
  r('schedule-verb', /(?:^|\b(?:please|you|to|and|i|let's|lets|hey|olly|alexa|google|just)\s+)(?:re)?schedule (?!for\b|of\b|is\b|on\b)/, { create: 3.5 }),
  r('set-done', /\b(?:have|has|had|i've|you've|already|were|was)\s+(?:\w+ )?(?:set|placed|kept|made|added)\b|\b(?:alarms?|reminders?|alerts?)\s+(?:that are |that |i |you |i've |you've |which (?:is|are) )(?:currently )?(?:set|kept|placed|made)\b|\bis (?:\w+ ){0,3}set\b|\bset alarms\b|\b(?:any|all) (?:\w+ )?(?:alarms?|reminders?) set\b/, { create: -2.5, query: 2 }),
  r('give-me-reminder', /\bgive (?:me|us) (?:a|an) (?:\w+ )?(?:reminder|alert|notification|warning|call|heads up|timer|alarm)\b/, { create: 3 }),
  r('want-to-know', /\b(?:if i have|need to know|want to know|like to know|provide|details?|information|info|hear my|contents?|state the)\b|\bmy (?:\w+ )?(?:lists|reminders|alarms|events|appointments|meetings)\b(?! (?:to|for|on) )|\b(?:lists?|reminders|alarms|events) (?:i|you) have\b/, { query: 2 }),
  r('turn-on', /\b(?:turn|switch) (?:\w+ ){0,3}on\b|\bactivate\b|\benable\b/, { create: 1.5 }),
  r('create-new', /\b(?:new|start|begin|another|prepare)\b/, { create: 2 }),
  r('create-need', /\bi (?:need|want|would like|'d like|wanna|must|should|will)\b|\bi (?:have|got|'ve got) (?:a|an|to)\b|\bi'?m (?:going|meeting|having|attending)\b|\bi'll\b/, { create: 1 }),
  r('create-repeat', /\b(?:repeat\w*|recur\w*|every (?:day|week|month|year|morning|night|evening|other|first|\w+day)|daily|weekly|monthly|yearly|annually)\b/, { create: 1.5 }),
  r('create-on-for', new RegExp(`\\b(?:on|for|at) (?:the )?(?:${WEEKDAY}|\\d|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|noon|midnight|tomorrow|tonight|next)`), { create: 0.5 }),
  r('question-start', /^(?:(?:hey |ok |okay |olly |alexa |google |siri )?(?:please )?)(?:what|whats|what's|when|when's|where|where's|which|who|who's|how|is|are|am|do|does|did|have|has|was|were|any|anything|will|should)\b/, { question: 2, query: 2, create: -1.5 }),
  r('wh-word', /\b(?:what|what's|whats|when|when's|where|which|who|how many|how much|how long)\b/, { query: 1 }),
  r('question-mark', /\?\s*$/, { question: 2, query: 1 }),
  r('query-verb', /\b(?:show|display|read|tell|check|give me|find|look up|look at|pull up|bring up|open|see|view|review|know|brief|describe|recap|summari[sz]e|go over|confirm|remaining|pending|upcoming|coming up|outstanding|left)\b|^(?:please )?list\b|\blist (?:all|my|the|out)\b/, { query: 1.5 }),
  r('query-have', /\b(?:do|did|have|will) (?:i|we) (?:have|got|need)\b|\bdid you\b|\bam i\b|\bis (?:there|it|my)\b|\bare (?:there|my)\b|\bhave i\b|\bdid i\b|\bhow many\b|\bhow long until\b|\banything\b|\bwhat's (?:on|up|happening|going on)\b|\bwhat do i have\b/, { query: 2.5 }),
  r('query-bare-mine', /^(?:(?:olly|alexa|google|siri|hey) )?(?:all )?(?:my|the|today'?s|tomorrow'?s|this week'?s) (?:\w+ )?(?:alarms?|schedule|calendar|agenda|lists?|reminders|events|appointments|meetings|plans|to-?do list)\s*(?:for \w+)?$/, { query: 2 }),
  r('delete-verb', /\b(?:delete|deleted|deletion|remove|removed|cancel\w*|clear|erase|wipe|discard|dismiss|unschedule|unset|disable|deactivate|kill|destroy|purge|format|reset|eliminate|abolish|disregard)\b|\bdrop (?:it|that|this|the (?:task|meeting|event|reminder|alarm))\b|\bclean (?:out |up )?(?:my|the) (?:calendar|schedule|agenda|list|day)\b|\bempty (?:my|the|out)\b|^(?:please |just )?(?:forget|empty)\b/, { delete: 4, task: 1.5 }),
  r('delete-phrase', /\bget rid of\b|\btake (?:\w+ ){0,3}(?:off|out|away) (?:of|from)\b|\btaken? (?:it|them|this|that|\w+)? ?(?:off|away)\b|\btake off\b|\bfree up\b|\bcross (?:\w+ )?off\b|\bscratch\b|\bno (?:more|longer)\b|\bany (?:more|longer)\b|\bdon'?t (?:need|want)\b|\bdo not (?:need|want)\b|\bwon'?t (?:be|need)\b|\bnot (?:going|attending)\b|\bcalled off\b/, { delete: 3 }),
  r('delete-off', /\b(?:turn|switch|shut|stop|silence|snooze)\b(?: \w+){0,4} off\b|\bturn off\b|\bswitch off\b|\bstop\b|\bsnooze\b|\bsilenced?\b|\bdo not wake\b|\bdon'?t wake\b/, { delete: 2.5 }),
  r('update-verb', /\b(?:reschedul\w*|postpone\w*|push (?:\w+ ){0,3}back|bring (?:\w+ ){0,3}forward|delay\w*|rename\w*)\b/, { update: 4 }),
  r('update-move-to-date', /\b(?:move|push|shift|bump)\b .{1,60}?\b(?:to|till|until)\s+(?:(?:next|this|on)\s+)?(?:mon|tue|wed|thu|fri|sat|sun|tomorrow|today|tonight|noon|\d)/, { update: 3.5, task: 1 }),
  r('update-change', /\b(?:change|changed|move|moved|shift|update|edit|modify|switch)\b (?:my|the|it|this|that|alarm|meeting|event|reminder|time|date|\w+'s)\b(?:.*\b(?:to|till|until|from|instead)\b)?/, { update: 2.5 }),
  r('complete', /\b(?:i|we)(?: have|'ve)? (?:just )?(?:finished|completed|done with|did)\b|^(?:(?:i'?m|i am|we'?re|we are) )?(?:all |finally )?(?:done|finished) with\b|\b(?:is|are|was|'s) (?:all )?(?:done|finished|completed|complete)\b|\bmark(?:ed)? (?:.*\b)?(?:as )?(?:done|complete|completed|finished)\b|\b(?:check|tick) (?:\w+ ){0,3}off\b|\bcompleted?\b$|\bdone\b$/, { complete: 5, task: 2.5 }),

  // Memory statements.
  r('decision', /\b(?:we|i)(?: have|'ve)? (?:decided|agreed|chose|settled on|opted)\b|\bdecision\b|\blet'?s (?:go with|use)\b|\bwe(?:'re| are) going (?:with|to go with|to use)\b|\bgoing forward we\b/, { decision: 6 }),
  r('fact-me', /\bi (?:live|work|worked|was born|grew up|study|studied|moved)\b|\bi(?:'m| am) (?:from|allergic|vegetarian|vegan|married|single|a |an )|\bi have (?:a|an|two|three|four) (?:\w+ )?(?:kids?|children|sons?|daughters?|sisters?|brothers?|dogs?|cats?|pets?|car)\b/, { fact: 4 }),
  r('fact-my', /\bmy (?:(?:\w+ ){0,2})(?:is|are|was|were|lives|works)\b(?! (?:set|on|at|scheduled|due|tomorrow|today))/, { fact: 2.5 }),
  r('fact-family', /\bmy (?:wife|husband|sister|brother|mother|mom|father|dad|son|daughter|boss|partner|friend|kids?|children|parents|girlfriend|boyfriend)(?:'s \w+)? (?:is|are|works|lives|likes)\b/, { fact: 2 }),
  r('preference', /\bi (?:prefer|like|love|hate|dislike|enjoy|don'?t like)\b|\bfrom now on\b|\bin (?:the )?future\b|\bby default\b|\bplease always\b|\balways (?:sort|show|use|reply|answer|remind|list)\b|\bnever (?:show|use|remind|call)\b|\bcall me (?!at\b|in\b|on\b|tomorrow|tonight|when|after|before|back|later|every)|\bmy name is\b|\bmy (?:time ?zone|timezone) is\b|\bi(?:'m| am) in (?:the )?(?:\w+ )?(?:time ?zone|pst|pdt|est|edt|cst|cdt|mst|utc|gmt)\b|\b(?:reply|respond|answer|talk|speak) (?:to me )?in (?:english|chinese|mandarin)\b|\bsort (?:my |the )?(?:tasks|todos|to-?dos|items|list) by\b/, { preference: 5 }),
  r('recall', /\bwhat did (?:i|we) (?:say|tell you|mention|write|note|decide|agree)\b|\bdid i (?:say|mention|tell you)\b|\bremind me what\b|\bwhat was (?:the|that) .*\b(?:i|we) (?:said|mentioned|decided|discussed|talked about)\b|\bdo you remember\b|\bi (?:told|said to) you\b|\bwhat have i told you\b/, { recall: 7 }),
  r('project', /\bprojects?\b/, { project: 2 }),
  r('project-status', /\b(?:status|progress|how(?:'s| is| are) .*\bgoing|where are we|update on)\b/, { project: 2 }),
];

const ORDINAL_WORDS: Readonly<Record<string, number>> = { first: 1, second: 2, third: 3, fourth: 4, fifth: 5, sixth: 6, seventh: 7, eighth: 8, ninth: 9, tenth: 10 };

/** English tables. */
export const EN_RULES: LanguageRules = {
  language: 'en',
  signals: EN_SIGNALS,
  priorities: [
    { pattern: /\b(?:urgent\w*|asap|a\.s\.a\.p\.?|right away|immediately|top priority|critical|emergency)\b/, priority: 'urgent' },
    { pattern: /\b(?:high[- ]priority|important|high pri|p1|priority one)\b/, priority: 'high' },
    { pattern: /\b(?:low[- ]priority|not urgent|no rush|whenever|someday|when i have time)\b/, priority: 'low' },
  ],
  preferences: [
    { pattern: /\bsort (?:my |the )?(?:tasks|todos|to-?dos|items|list)? ?by (?<value>[\w ]+)/, key: 'taskSort', valueGroup: 'value' },
    { pattern: /\b(?:my (?:time ?zone|timezone) is|i(?:'m| am) in (?:the )?) ?(?<value>[a-z/_+\-0-9: ]+?)(?: time ?zone)?\s*[.!]?$/, key: 'timeZone', valueGroup: 'value' },
    { pattern: /\b(?:reply|respond|answer|talk|speak) (?:to me )?in (?<value>english|chinese|mandarin)\b/, key: 'language', valueGroup: 'value' },
    { pattern: /\b(?:call me|my name is) (?<value>[a-z][\w'-]*(?: [a-z][\w'-]*)?)/, key: 'name', valueGroup: 'value' },
  ],
  references: {
    pronoun: /\b(?:it|that|this|that one|this one|that task|this task|the task|the last task|the previous (?:one|task))\b/,
    ordinal: /\bthe (?<n>first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d{1,2}(?:st|nd|rd|th))(?: one| task| item)?\b(?! of\b)|\b(?:task|item|number|no\.?) ?#?(?<d>\d{1,2})\b/,
    last: /\bthe (?:last|final|bottom) (?:one|task|item)\b/,
    ordinalValue: (n) => ORDINAL_WORDS[n] ?? (/^\d+/.test(n) ? Number.parseInt(n, 10) : undefined),
  },
  title: {
    leading: [
      /^(?:ok(?:ay)?|hey|hi|so|also|and|oh|um|well|alright|olly|alexa|google|siri)\b[\s,]*/,
      /^(?:can|could|would|will) you (?:please )?/,
      /^(?:please|kindly|pls)\b[\s,]*/,
      /^(?:i (?:need|want|have|would like|'d like|must|should|gotta|got) (?:you )?to|i'll need to|need to|have to|must|don'?t forget to|don'?t let me forget to|remember to|make sure (?:to|i)|i need)\s+/,
      /^(?:remind (?:me|us) (?:to|about|of|that)|set (?:up )?(?:a |an )?(?:reminder|alarm|notification) (?:to|for|about|that)|add (?:a )?(?:task|reminder|todo|to-?do) (?:to|for)?|add|put|schedule|create (?:a |an )?(?:task|event)?(?: for| to| called)?|new task:?|todo:|task:)\s+/,
      /^(?:remind (?:me|us)|set (?:an? )?(?:alarm|reminder))\b\s*/,
      /^i (?:have|'ve got|got) (?=an? )/,
      /^(?:a|an) (?=\w+ (?:with|for|at|on)\b)/,
    ],
    trailing: [
      /\s*[.!?。！？,;:]+$/,
      /\s+(?:please|pls|thanks|thank you|ok|okay)$/,
      /\s+(?:to|on|in|onto|into) (?:my|the) (?:\w+ )?(?:to-?do list|todo list|list|calendar|schedule|agenda|reminders)$/,
      /\s+(?:for me|for us)$/,
    ],
    anywhere: [/(?:[,;:]\s*)?(?:(?:it'?s|it is|this is|that'?s|which is)\s+)?(?:very\s+)?\b(?:urgent(?:ly)?|asap|a\.s\.a\.p\.?|right away|immediately|high[- ]priority|low[- ]priority|important|top priority)\b/g],
    dangling: /^(?:at|on|by|before|for|in|to|and|the|from|until|till|of|with|is|that|it|due)(?:\s+|$)|\s+(?:at|on|by|before|for|in|to|and|the|from|until|till|of|with|is|due)$/,
    target: [
      /^(?:please )?(?:mark|set|flag)\s+/,
      /\s+as (?:done|complete|completed|finished)$/,
      /^(?:i|we)(?: have|'ve)? (?:just )?(?:finished|completed|done with|did)\s+/,
      /\s+(?:is|are|was|'s) (?:all )?(?:done|finished|completed|complete)$/,
      /^(?:all )?(?:done|finished|completed?)(?:\s+with)?(?:\s+|$)/,
      /^(?:delete|remove|cancel|drop|clear|erase|get rid of|take|check|tick|cross)\s+/,
      /\s+(?:off|out|away)(?: (?:of|from) .*)?$/,
      /\s+from (?:my|the) .*$/,
      /^(?:reschedule|postpone|move|push back|push|delay|change|shift|update|rename|bring forward)\s+/,
      /\s+(?:to|till|until|by) .*$/,
      /\s+(?:back|forward)$/,
    ],
    dateCue: { before: /\b(?:by|before|until|till|due|no later than)\s*$/, after: /^$/ },
    fallback: [
      [/\balarm|\bwake\b/, 'alarm'],
      [/\bremind|\breminder/, 'reminder'],
      [/\bmeet/, 'meeting'],
    ],
  },
  rationale: /^(?<statement>.+?)[,;]?\s+(?:because|since|as|due to|given that|so that)\s+(?<rationale>.+)$/,
  recallTopic: /\b(?:say|said|tell you|told you|mention(?:ed)?|decide(?:d)?|note(?:d)?|write|wrote|remember)\s+(?:about|regarding|on)?\s*(?<topic>.+?)\s*\??$/,
  project: /["“'](?<name>[^"”']{1,40})["”'] project\b|\b(?<name2>[a-z0-9][\w-]*(?: [a-z0-9][\w-]*)?) project\b|\bproject (?<name3>[a-z0-9][\w-]*)/i,
  projectTrim: /^(?:(?:the|our|my|this|that|on|for|of|about|finish|complete|start|with|how|is|what's|whats)\s+)+/i,
  person: /\b(?:with|call|email|text|tell|ask|meet|invite|remind) (?<name>(?:mr\.? |mrs\.? |ms\.? |dr\.? )?(?!(?:me|us|him|her|them|the|a|an|my|our|your|this|that|it)\b)[a-z][a-z'-]+)|\bmy (?<rel>mom|mother|dad|father|sister|brother|wife|husband|boss|son|daughter|friend|manager|team|doctor)\b/i,
  place: /\b(?:at|in) (?:the )?(?<name>(?:office|gym|home|school|work|church|park|airport|hospital|library|conference room)\b|(?!(?:English|Chinese|Mandarin|Spanish|French|German|Japanese)\b)[A-Z][a-z]+(?: [A-Z][a-z]+)?)/,
  reportedDone: /^(?:(?:ok|okay|so|well|also|and|yes|yeah|alright)[, ]+)*(?:(?:i|we)(?:'ve| have| had)? )?(?:just |already |finally |also )*(?<verb>[a-z]+)\b(?! to\b| for\b)/,
  zoneStatement:
    /^(?:(?:i'?m|i am)(?: now| currently)? (?:in|on) (?:the )?(?<place>\p{L}[\p{L}\d .'\/_+:-]{0,40}?)(?: time(?: ?zone)?)?|(?:my )?(?:time ?zone|timezone) is (?:now )?(?<place2>[^.!?]{2,40}?)(?: time)?|(?:set|change|switch) my (?:time ?zone|timezone) to (?<place3>[^.!?]{2,40}?))\s*[.!]*$/u,
  clarifyTarget: (title) => `Do you mean the task “${title}”?`,
  clarifyWhich: () => 'Which task do you mean?',
  clarifyIntent: (summary) => `Do you want me to save “${summary}”?`,
};
