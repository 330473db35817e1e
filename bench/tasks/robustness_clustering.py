"""InBedder's instruction-robustness tasks (paper §3.3, appendix B; `robust_evaluation.py`).

Six clustering corpora, each clustered under 10 correct, 10 implicit and 10 incorrect instructions
(scoring: `bench/tasks/abstasks/instruction_robustness.py`). The instruction lists are verbatim from InBedder's
`mteb/tasks/Clustering/*.py` (a test compares them with `InBedder/derived/task_descriptions_and_instructions.json`);
NYTTopicClustering's lists are, as in InBedder, the same as its TwentyNewsgroupsClustering lists.
The paper's figures show five sets; the released code also runs NYTTopicClustering, so the suite has six.

Data: the published datasets at the revisions InBedder pins (BrandonZYW/*Clustering, one `test` split
with columns text,cluster; NYTTopicClustering is config `topic` of BrandonZYW/NYTClustering), or a local
copy in the same schema:

    DATA_DIR/FewRelClustering/test.{jsonl,csv,json,parquet}       text,cluster
    DATA_DIR/FewNerdClustering/test.*  DATA_DIR/FewEventClustering/test.*
    DATA_DIR/RateMyProfClustering/test.*  DATA_DIR/FeedbacksClustering/test.*
    DATA_DIR/NYTClustering/topic.*                                  shared with NYTClustering's topic aspect

`bench build-data` writes these folders from public raw files (bench/dataset_builders/clustering_sets.py):
the Few* corpora from ClusterLLM's release (same sizes and label counts as the published sets), and
label-derived STAND-INS for RateMyProf and Feedbacks (GoalEx taxonomies: real texts, partial GPT labels).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mteb import TaskMetadata

from bench.tasks._common import CommonFields, common_metadata
from bench.tasks.abstasks import AbsTaskInstructionRobustness

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import SampleCreationMethod, TaskType


class _RobustnessFields(CommonFields):
    type: TaskType
    main_score: str
    sample_creation: SampleCreationMethod


_ROBUSTNESS = _RobustnessFields(
    # Not "Clustering": the main score is a gap between V-measures (correct minus implicit instructions,
    # about 0 for a model that ignores them), and MTEB's per-type mean would average it with absolute
    # V-measures. MTEB's InstructionReranking mean averages p-MRR, the change in a ranking when the
    # instruction changes: the same kind of number (an instruction-following gap in [-1, 1]). MTEB model
    # implementations key prompts by type too, so these tasks get a model's InstructionReranking prompt.
    type="InstructionReranking",
    main_score="delta_ci_mean",
    sample_creation="found",
    **common_metadata(),
)


class NYTTopicClustering(AbsTaskInstructionRobustness):
    suites = ("robustness", "inbedder")
    hub_configs = ("topic",)
    data_folder = "NYTClustering"
    instructions = {
        "correct": (
            "I'm curious, what is the article about?",
            "Could you tell me what subject the article is focused on?",
            "Can you inform me about the central topic covered in the article?",
            "What is the main theme of the news article?",
            "What subject matter does this news article address?",
            "Could you summarize the key topic of the article?",
            "I'd like to know, what is the focus of this news piece?",
            "Can you describe the primary issue discussed in the news article?",
            "What is the core topic the article is centered on?",
            "What specific theme is the article dealing with?",
        ),
        "implicit": (
            "I'd be interested to hear your thoughts on what the article covers.",
            "What's the latest in the news that's caught your attention?",
            "Have you come across any interesting headlines lately?",
            "What's making the headlines in today's paper?",
            "I'm curious about the current news trends; what's being discussed?",
            "What are journalists focusing on these days?",
            "Any significant stories in the news you think I should be aware of?",
            "I'm looking to catch up on the news; what are the hot topics?",
            "What's the buzz in the media right now?",
            "I heard there's an interesting piece in the news; can you fill me in?",
        ),
        "incorrect": (
            "Could you tell me which publication or journalist wrote this article?",
            "What kind of viewpoints or analyses does the article present?",
            "How does this article relate to or impact current events or public opinion?",
            "Does the article provide any historical context or background information?",
            "Are there any significant data or statistics mentioned in the article?",
            "Does the article feature any interviews or notable quotes from people?",
            "What region or area does this news article focus on?",
            "Does the article discuss any specific policies or legislation?",
            "Does the article make any predictions or speculate about future events?",
            "What has been the public or reader reaction to this news piece?",
        ),
    }
    metadata = TaskMetadata(
        name="NYTTopicClustering",
        description=("NYT articles (the NYTClustering topic corpus) clustered by topic under 30 instructions."),
        dataset={"path": "BrandonZYW/NYTClustering", "revision": "462fb544c8993a0421fd969a7a0f19f1fbd975bf"},
        domains=["News", "Written"],
        license="not specified",
        annotations_creators="derived",
        **_ROBUSTNESS,
    )


class FeedbacksClustering(AbsTaskInstructionRobustness):
    suites = ("robustness", "inbedder")
    instructions = {
        "correct": (
            "Please classify the human's feedback on this AI-generated text, identifying their reasons for either liking or disliking it.",
            "Examine the human response to the machine-produced text and determine the basis of their approval or disapproval.",
            "Analyze this human feedback on the text generated by the machine and categorize the rationale behind their positive or negative reaction.",
            "Review the human's critique of the AI-created text and identify the factors that contributed to their preference or aversion.",
            "Assess the human's evaluation of the computer-generated text, focusing on understanding the grounds for their liking or disliking it.",
            "Inspect the feedback provided by a human on this machine-composed text, and categorize the reasoning behind their positive or negative opinion.",
            "Sort the human's reaction to the AI-produced text into categories based on why they found it appealing or unappealing.",
            "Interpret the human's appraisal of the machine-generated text, identifying the specific reasons for their satisfaction or dissatisfaction.",
            "Break down the human feedback on the AI-generated text, and systematically categorize the cause of their liking or disliking.",
            "Take the human response to the text created by the machine and delineate the types of reasons behind their favorable or unfavorable view.",
        ),
        "implicit": (
            "Examine this human feedback on AI-generated text and explore what might have influenced their opinion.",
            "Consider the provided human response to the machine text and subtly identify what swayed their views.",
            "Reflect on the reasons behind the human's reaction to this computer-crafted text, focusing on underlying factors.",
            "Observe the human's impressions of the AI text and deduce the subtle nuances that shaped their perspective.",
            "Delve into this feedback on machine-generated text and infer the reasons for the human's viewpoint.",
            "Analyze the human response to the text, reading between the lines to understand their sentiment.",
            "Scrutinize the feedback from a human perspective on AI text and intuit what drove their reaction.",
            "Contemplate the human's take on this machine-generated text and ascertain the factors influencing their stance.",
            "Perceive the nuances in the human feedback on the AI text and speculate on what led to their feelings.",
            "Evaluate the human response to this text and piece together the elements that formed their opinion, be it positive or negative.",
        ),
        "incorrect": (
            "Review this article on sustainable agriculture practices and summarize its key recommendations.",
            "Analyze the latest trends in renewable energy technologies and prepare a brief report on their potential impacts.",
            "Examine the historical significance of the Renaissance period in Europe, focusing on its contributions to art and science.",
            "Conduct a study on consumer behavior in online shopping and identify the top factors that influence purchase decisions.",
            "Create a presentation on the importance of physical exercise in maintaining mental health, using recent studies as references.",
            "Develop a marketing strategy for a new health food product, targeting a specific demographic.",
            "Write a short story set in a futuristic world where artificial intelligence governs society.",
            "Compare and contrast the political systems of two different countries, highlighting their strengths and weaknesses.",
            "Design a survey to gather opinions on public transportation improvements in urban areas.",
            "Investigate the effects of climate change on marine ecosystems and propose measures for conservation.",
        ),
    }
    metadata = TaskMetadata(
        name="FeedbacksClustering",
        description=(
            "Human feedback on machine-written summaries, clustered by the reason for (dis)liking them (3 balanced clusters, GPT-4 labels) under 30 instructions."
        ),
        dataset={"path": "BrandonZYW/FeedbacksClustering", "revision": "365ef3e171ad4dab887b08495b10940a1aecb04b"},
        domains=["Written"],
        license="not specified",
        annotations_creators="LM-generated",
        **_ROBUSTNESS,
    )


class RateMyProfClustering(AbsTaskInstructionRobustness):
    suites = ("robustness", "inbedder")
    instructions = {
        "correct": (
            "Examine this student's review of the course and the professor, and identify the specific aspects being discussed.",
            "Please analyze the student's feedback regarding the course and professor, and determine the key topics covered.",
            "Read through the student's evaluation of the course and professor, and classify the main points they are addressing.",
            "Take a look at this student review about the course and instructor, and segregate the areas they are commenting on.",
            "Review this student's comments on the course and professor, and sort out the different aspects they mention.",
            "Go through the student's appraisal of the course and professor, and label the specific subjects they are referring to.",
            "Assess the student's critique on the course and professor, and pinpoint the various aspects they are focusing on.",
            "Examine the student's feedback on the course and professor, and categorize the different elements they discuss.",
            "Inspect this review from a student about the course and professor, and identify the distinct areas they are evaluating.",
            "Peruse the student's observations about the course and professor, and classify the particular aspects they are examining.",
        ),
        "implicit": (
            "Take a moment to reflect on this student's review of the course and professor. What themes do you notice?",
            "As you read through the student's thoughts on the course and instructor, consider what stands out to you.",
            "What aspects do you think this student review of the course and professor focuses on?",
            "Peruse this student's perspective on the course and professor, and think about what they emphasize.",
            "Consider the student's viewpoint on the course and professor. What do you feel are the key areas they touch upon?",
            "Observe the details in this student's review of the course and professor. What elements seem prominent?",
            "While reading the student's review, try to grasp which aspects of the course and professor they find noteworthy.",
            "Contemplate the student's feedback on the course and professor. Which aspects seem to be highlighted?",
            "As you go through the student's review, what key points about the course and professor do you perceive?",
            "Engage with the student's review on the course and professor, and think about the aspects they seem to focus on.",
        ),
        "incorrect": (
            "Please draft a brief summary of the last chapter you read from your assigned textbook.",
            "Create a mind map that illustrates the key themes of the novel 'To Kill a Mockingbird'.",
            "Conduct a small experiment demonstrating a basic principle of physics and document your findings.",
            "Compose a short essay discussing the impact of social media on modern communication.",
            "Design a poster that effectively communicates the importance of environmental conservation.",
            "Develop a basic mobile app prototype that solves a common everyday problem.",
            "Write a script for a five-minute skit that humorously explores historical events.",
            "Craft a detailed business plan for a startup idea focusing on sustainable technology.",
            "Prepare a presentation on the latest advancements in renewable energy sources.",
            "Analyze a set of data using statistical methods and present your conclusions in a report.",
        ),
    }
    metadata = TaskMetadata(
        name="RateMyProfClustering",
        description=(
            "RateMyProfessor reviews clustered by the aspect discussed (4 balanced clusters, GPT-4 labels) under 30 instructions."
        ),
        dataset={"path": "BrandonZYW/RateMyProfClustering", "revision": "253b8501d191f7c3d3aff3bc27c6d7f7112589ba"},
        domains=["Reviews", "Written"],
        license="mit",
        annotations_creators="LM-generated",
        **_ROBUSTNESS,
    )


class FewRelClustering(AbsTaskInstructionRobustness):
    suites = ("robustness", "inbedder")
    instructions = {
        "correct": (
            "This statement is provided for your analysis. Identify and describe the type of relationship that exists between the two entities mentioned at the end of the sentence.",
            "Examine the following sentence and determine the nature of the connection between the two entities specified in the appendage.",
            "After reading the sentence given, please elucidate on the type of association present between the two named entities that follow.",
            "Review this sentence and subsequently identify the kind of link or interaction between the two entities that are highlighted at its conclusion.",
            "Consider the content of this sentence, and then clarify the relationship type existing between the two designated entities mentioned thereafter.",
            "In the sentence provided, analyze and state the type of relationship observed between the two specific entities added at the end.",
            "Upon examining the given sentence, please indicate and explain the nature of the relationship between the two entities listed subsequently.",
            "Here's a sentence for you to assess. Identify the kind of bond or connection that exists between the two entities specified right after the sentence.",
            "Read the following sentence and then articulate the type of relationship that is present between the two entities mentioned in the subsequent addendum.",
            "Observe the sentence provided and determine the relationship type between the two particular entities that are mentioned at its end.",
        ),
        "implicit": (
            "Take a look at this sentence and consider the connection between the two entities mentioned afterwards. What do you think links them?",
            "Read the provided sentence and reflect on how the two entities that follow might be related to each other.",
            "Examine the sentence closely. What are your thoughts on the relationship of the two names you'll find at the end?",
            "Explore the dynamics in the sentence given, particularly focusing on the two entities introduced at its close.",
            "After reading the sentence, share your insights about how the two subsequent entities might interact or connect.",
            "Ponder over this sentence and the two entities that come after. How would you describe their connection?",
            "Consider the context of the sentence and think about the two entities that follow. What kind of bond do they share?",
            "Look into the sentence and its conclusion with two specific entities. What relationship do you perceive between them?",
            "Reflect on the sentence and the two names that come after. In what way do you think they are related?",
            "Peruse the sentence and observe the two appended entities. Can you infer a relationship between them?",
        ),
        "incorrect": (
            "Review this paragraph and summarize its main idea in your own words.",
            "Look at the list of words provided and create a short story that includes all of them.",
            "Examine the sentence given and identify any grammatical errors or areas for improvement.",
            "Read the passage and then write a brief analysis discussing its tone and style.",
            "Consider the provided data and create a graph or chart that best represents the information.",
            "Analyze this poem for its use of metaphor and imagery, and explain their significance.",
            "Translate the following sentence into another language you are familiar with.",
            "Evaluate the argument presented in this text and write a counterargument.",
            "Study the historical event described here and list its major causes and effects.",
            "Observe the sequence of events in this narrative and predict what might happen next.",
        ),
    }
    metadata = TaskMetadata(
        name="FewRelClustering",
        description=(
            "FewRel sentences clustered by the relation between the two entities appended to each sentence (64 relations) under 30 instructions."
        ),
        dataset={"path": "BrandonZYW/FewRelClustering", "revision": "d951bf6cb10522c042bf8db3a837028b7e69388f"},
        domains=["Encyclopaedic", "Written"],
        license="not specified",
        annotations_creators="human-annotated",
        **_ROBUSTNESS,
    )


class FewEventClustering(AbsTaskInstructionRobustness):
    suites = ("robustness", "inbedder")
    instructions = {
        "correct": (
            "After reading the provided sentence, identify the type of event based on the trigger words that follow.",
            "Examine this sentence and determine the event type using the appended trigger words.",
            "Please classify the type of event in the sentence using the trigger words given at the end.",
            "Review the sentence given and use the subsequent trigger words to specify the event type.",
            "Analyze the sentence and ascertain the event type based on the trigger words attached afterward.",
            "Consider the sentence provided and identify what type of event is indicated by the trigger words that come after.",
            "Read the sentence and, using the trigger words that follow, tell us what type of event it refers to.",
            "Look at the provided sentence and use the appended trigger words to determine the nature of the event.",
            "Observe the sentence and use the trigger words that are attached below it to classify the event type.",
            "Inspect this sentence and, with the help of the trigger words that follow, discern the type of event it implies.",
        ),
        "implicit": (
            "Take a look at this sentence and consider what the following trigger words might reveal about the event it describes.",
            "Explore the meaning of this sentence further by reflecting on the trigger words provided at the end.",
            "See if you can infer the type of event in the sentence based on the additional words that follow.",
            "Ponder over the sentence and how the subsequent trigger words might shed light on its event type.",
            "Examine the sentence and think about what the attached trigger words could suggest about the event.",
            "Contemplate the sentence and the trigger words that come after to understand the event's nature.",
            "Delve into this sentence and use the clues from the trigger words following it to grasp the event type.",
            "Consider what the trigger words following this sentence might indicate about the type of event it pertains to.",
            "Reflect on how the appended trigger words might define the event mentioned in the sentence.",
            "Study the sentence and let the trigger words that follow guide you to an understanding of the event type.",
        ),
        "incorrect": (
            "Review this paragraph and summarize its main idea in your own words.",
            "Look at the list of items below and categorize them into groups based on their similarities.",
            "Examine the graph presented and explain the trend it depicts over time.",
            "Read the dialogue between two characters and infer their emotional states from their conversation.",
            "Analyze the poem provided and identify the primary literary devices used by the poet.",
            "Observe the image and write a brief description of the scene it portrays.",
            "Listen to the audio clip and transcribe the spoken words accurately.",
            "Study the historical event described and list the key factors that led to its occurrence.",
            "Examine the mathematical equation and solve for the unknown variable.",
            "Watch the video and then explain the process demonstrated step by step.",
        ),
    }
    metadata = TaskMetadata(
        name="FewEventClustering",
        description=(
            "FewEvent sentences clustered by the type of the event whose trigger is appended to each sentence (34 types) under 30 instructions."
        ),
        dataset={"path": "BrandonZYW/FewEventClustering", "revision": "aecc9c3ad7ae8d05b8621390d1919f1816eab777"},
        domains=["Encyclopaedic", "News", "Written"],
        license="not specified",
        annotations_creators="human-annotated",
        **_ROBUSTNESS,
    )


class FewNerdClustering(AbsTaskInstructionRobustness):
    suites = ("robustness", "inbedder")
    instructions = {
        "correct": (
            "After reading the provided sentence, identify and describe the type of the entity that is mentioned at the end.",
            "Examine this sentence and then specify what category the highlighted entity at its conclusion belongs to.",
            "Review the given sentence and determine the nature of the entity that follows.",
            "Please analyze the sentence below and inform me about the classification of the entity that is appended.",
            "Upon reading the sentence, your task is to identify and state the type of the entity mentioned last.",
            "Look at the sentence provided and then articulate the kind of entity that is added at the end.",
            "Read the following sentence and then describe the category of the specified entity that appears at its end.",
            "Consider the sentence presented and clarify the type of the entity that concludes it.",
            "Observe the sentence below and then specify the nature of the entity that is attached at the end.",
            "Interpret the given sentence and then explain the classification of the entity that is mentioned in its final part.",
        ),
        "implicit": (
            "Take a look at this sentence and share your thoughts on the entity mentioned at the end.",
            "Consider the sentence below and let's discuss the nature of what's described last.",
            "Reflect on the provided sentence and offer insights into the entity concluding it.",
            "Examine this sentence closely and hint at the classification of the final entity.",
            "Observe the sentence and ponder the type of the entity it concludes with.",
            "Read through this sentence and casually mention your understanding of the last mentioned entity.",
            "Peruse the sentence and subtly indicate the category of the entity at its end.",
            "Absorb the content of this sentence and allude to what you think the final entity represents.",
            "Analyze this sentence in a relaxed manner and infer the type of the appended entity.",
            "Take in the sentence provided and give a gentle nod towards the nature of its concluding entity.",
        ),
        "incorrect": (
            "Read the sentence and identify the primary action verb used within it.",
            "Please summarize the main idea expressed in the given sentence in your own words.",
            "Examine this sentence and list any adjectives that appear, explaining their impact on the sentence's tone.",
            "Focus on the sentence structure and explain whether it's a simple, compound, complex, or compound-complex sentence.",
            "Determine the mood conveyed by the sentence and describe how it's achieved through word choice or syntax.",
            "Identify any figurative language used in the sentence, such as metaphors or similes, and explain their effect.",
            "Analyze the sentence for its use of tense and discuss how this affects the overall meaning.",
            "Point out any instances of passive voice in the sentence and suggest ways to rewrite them in active voice.",
            "Look for any subordinate clauses in the sentence and explain their role in contributing to the overall message.",
            "Examine the sentence for punctuation usage and discuss how it influences the rhythm or clarity of the sentence.",
        ),
    }
    metadata = TaskMetadata(
        name="FewNerdClustering",
        description=(
            "Few-NERD sentences clustered by the type of the entity appended to each sentence (58 fine-grained types) under 30 instructions."
        ),
        dataset={"path": "BrandonZYW/FewNerdClustering", "revision": "9dff096e4ca4dd38688236fa1d4e4c17cb547e66"},
        domains=["Encyclopaedic", "Written"],
        license="not specified",
        annotations_creators="human-annotated",
        **_ROBUSTNESS,
    )
